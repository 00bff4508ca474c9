// POST /auth/login: e-mail or E.164 phone + password, enumeration-safe, rate-limited, with MFA, account state,
// new-location confirmation and required actions.
import { config } from '../config'
import { clear, perIp, type Reservation, reserve } from '../core/ratelimit'
import {
  cachedUser,
  findUserByEmail,
  findUserByPhone,
  hasKnownIps,
  setPasswordVerdict,
  updateUser,
} from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { completeLogin, isKnownLocation, type LoginContext } from '../accounts/complete-login'
import { secondFactor } from '../accounts/second-factor'
import {
  accountCompromised,
  accountDisabled,
  accountScheduledForDeletion,
  invalidLogin,
  newLoginLocation,
} from './errors'
import { mailLoginLocation } from './mail'
import type { LoginInput } from './schemas'
import { issueOneTime } from '../accounts/one-time'
import { hashPassword, needsRehash, verifyPassword } from '../accounts/passwords'
import { passwordProblem } from '../accounts/password-policy'

// Failed logins are limited three ways (a success takes its attempt back):
// - per source IP, whatever the account (one machine trying many accounts);
// - per account and source IP (one machine guessing one password) — this is the tight limit;
// - per account from every IP it never logged in from (a botnet guessing one password). The owner on a known IP is
//   not held by it, so strangers failing against an account cannot lock its owner out; from a new IP the owner waits
//   like anybody else, and a new location needs its e-mail confirmation anyway.
const LOGIN_FAILURES_PER_IP = { limit: 30, windowMs: 10 * 60_000 }
const LOGIN_FAILURES_PER_ACCOUNT_AND_IP = { limit: 10, windowMs: 15 * 60_000 }
const LOGIN_FAILURES_PER_ACCOUNT = { limit: 100, windowMs: 60 * 60_000 }
const AUTHORIZE_IP_TTL_MS = 24 * 3600_000

// Verified against when the account does not exist, so both answers take the same time.
let dummyHash: Promise<string> | undefined
const dummy = () => (dummyHash ??= hashPassword('not-a-real-password-just-for-timing'))

export async function findUserByLogin(login: string): Promise<UserRow | undefined> {
  const value = login.trim()
  return value.startsWith('+') ? await findUserByPhone(value) : await findUserByEmail(value)
}

export async function login(input: LoginInput, context: LoginContext) {
  const ip = context.client.ip
  const accountKey = input.login.trim().toLowerCase()
  // This account from this source (an IPv6 client by its /64, as every per-IP limit).
  const pair = perIp('login-account-ip', ip, LOGIN_FAILURES_PER_ACCOUNT_AND_IP, accountKey)
  // Counted now, before any other await (the account's lookup) and before the password hash is checked: parallel
  // guesses cannot all pass the limit.
  const attempt = await reserve(perIp('login-ip', ip, LOGIN_FAILURES_PER_IP), pair)
  const user = await findUserByLogin(input.login)
  // From a place the account never logged in from: counted per account too (both counts, or neither).
  let fromElsewhere: Reservation | undefined
  if (!user || !(await isKnownLocation(user.id, ip))) {
    try {
      fromElsewhere = await reserve(['login-account', accountKey, LOGIN_FAILURES_PER_ACCOUNT])
    } catch (error) {
      attempt.release()
      throw error
    }
  }
  const hash = user?.passwordHash && !user.bot ? user.passwordHash : undefined
  const ok = hash
    ? await verifyPassword(input.password, hash)
    : (await verifyPassword(input.password, await dummy()), false)
  if (!user || !ok) throw invalidLogin()
  attempt.release()
  fromElsewhere?.release()
  await clear(pair[0], pair[1]) // the owner got in from here: earlier typos from this source are forgiven

  if (user.compromised) {
    throw accountCompromised()
  }
  if (user.state !== 'active') {
    if (!input.undelete) {
      throw user.state === 'disabled' ? accountDisabled() : accountScheduledForDeletion()
    }
    await updateUser(user.id, { state: 'active' })
  }
  if (config().newLoginLocationCheck && user.email && user.emailVerified && (await isNewLocation(user.id, ip))) {
    const token = await issueOneTime('authorize_ip', user.id, AUTHORIZE_IP_TTL_MS, { ip })
    await mailLoginLocation(user.email, token, ip, context.client.location)
    throw newLoginLocation()
  }
  // The policy's verdict (a dictionary check of ~5-20 ms on this thread) is kept with the password: judged once.
  const weak = user.passwordWeak ?? passwordProblem(input.password) !== null
  if (needsRehash(user.passwordHash!)) {
    await updateUser(user.id, { passwordHash: await hashPassword(input.password), passwordWeak: weak })
  } else if (user.passwordWeak === null) {
    await setPasswordVerdict(user.id, user.passwordHash!, weak)
  }
  const requiredActions = weak ? ['update_password'] : []
  // The ticket remembers the required actions for when the second factor finishes the login.
  const mfa = await secondFactor().challenge(
    user.id,
    'login',
    requiredActions.length ? { required_actions: requiredActions.join(',') } : {},
  )
  if (mfa) return mfa
  return await completeLogin((await cachedUser(user.id))!, context, requiredActions)
}

/** An IP the account never logged in from. An account with no known IP yet (created by an operator) is not asked. */
async function isNewLocation(userId: string, ip: string): Promise<boolean> {
  return (await hasKnownIps(userId)) && !(await isKnownLocation(userId, ip))
}
