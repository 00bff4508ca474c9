// POST /auth/login: e-mail or E.164 phone + password, enumeration-safe, rate-limited, with MFA, account state,
// new-location confirmation and required actions.
import { eq } from 'drizzle-orm'
import { config } from '../config'
import { ApiError, formError } from '../core/errors'
import { check, clear, record } from '../core/ratelimit'
import { db } from '../db/client'
import { mfaChallengeFor, mfaLoginBody } from '../mfa/login'
import { findUserByEmail } from '../users/store'
import { users, type UserRow } from '../users/tables'
import { completeLogin, type LoginContext } from './complete-login'
import { mailLoginLocation } from './mail'
import { issueOneTime } from './one-time'
import { hashPassword, needsRehash, verifyPassword } from './passwords'
import { passwordProblem } from './password-policy'
import { knownIps } from './tables'
import { and } from 'drizzle-orm'

export const LOGIN_FAILURES_PER_IP = { limit: 30, windowMs: 10 * 60_000 }
export const LOGIN_FAILURES_PER_ACCOUNT = { limit: 10, windowMs: 15 * 60_000 }
export const AUTHORIZE_IP_TTL_MS = 24 * 3600_000

const invalidLogin = () =>
  formError({ login: ['INVALID_LOGIN', 'Login or password is invalid.'], password: ['INVALID_LOGIN', 'Login or password is invalid.'] })

// Verified against when the account does not exist, so both answers take the same time.
let dummyHash: Promise<string> | undefined
const dummy = () => (dummyHash ??= hashPassword('not-a-real-password-just-for-timing'))

export function findUserByLogin(login: string): UserRow | undefined {
  const value = login.trim()
  if (value.startsWith('+')) return db().select().from(users).where(eq(users.phone, value)).get()
  return db().select().from(users).where(eq(users.email, value.toLowerCase())).get()
}

export type LoginInput = { login: string; password: string; undelete?: boolean; login_source?: string | null; gift_code_sku_id?: string | null }

export async function login(input: LoginInput, context: LoginContext) {
  const ip = context.client.ip
  const accountKey = input.login.trim().toLowerCase()
  check('login-ip', ip, LOGIN_FAILURES_PER_IP)
  check('login-account', accountKey, LOGIN_FAILURES_PER_ACCOUNT)

  const user = findUserByLogin(input.login)
  const ok = user?.passwordHash && !user.bot ? await verifyPassword(input.password, user.passwordHash) : (await verifyPassword(input.password, await dummy()), false)
  if (!user || !ok) {
    record('login-ip', ip)
    record('login-account', accountKey)
    throw invalidLogin()
  }
  clear('login-account', accountKey)

  if (user.compromised) {
    throw formError({ login: ['ACCOUNT_COMPROMISED_RESET_PASSWORD', 'Your account has been flagged as compromised. Reset your password to continue.'] })
  }
  if (user.state !== 'active') {
    if (!input.undelete) {
      throw user.state === 'disabled'
        ? new ApiError(400, 20013, 'This account is disabled')
        : new ApiError(400, 20011, 'This account is scheduled for deletion')
    }
    db().update(users).set({ state: 'active' }).where(eq(users.id, user.id)).run()
  }
  if (config().newLoginLocationCheck && user.email && user.emailVerified && isNewLocation(user.id, ip)) {
    const token = issueOneTime('authorize_ip', user.id, AUTHORIZE_IP_TTL_MS, { ip })
    await mailLoginLocation(user.email, token, ip, context.client.location)
    throw formError({ login: ['ACCOUNT_LOGIN_VERIFICATION_EMAIL', 'New login location detected, please check your e-mail.'] })
  }
  if (needsRehash(user.passwordHash!)) {
    db().update(users).set({ passwordHash: await hashPassword(input.password) }).where(eq(users.id, user.id)).run()
  }
  const requiredActions = passwordProblem(input.password) ? ['update_password'] : []
  // The ticket remembers the required actions for when the second factor finishes the login.
  const mfa = await mfaChallengeFor(user.id, 'login', requiredActions.length ? { required_actions: requiredActions.join(',') } : {})
  if (mfa) return mfaLoginBody(user.id, mfa)
  return completeLogin(db().select().from(users).where(eq(users.id, user.id)).get()!, context, requiredActions)
}

/** An IP the account never logged in from. An account with no known IP yet (created by an operator) is not asked. */
function isNewLocation(userId: string, ip: string): boolean {
  const any = db().select().from(knownIps).where(eq(knownIps.userId, userId)).limit(1).get()
  if (!any) return false
  return !db().select().from(knownIps).where(and(eq(knownIps.userId, userId), eq(knownIps.ip, ip))).get()
}

export { findUserByEmail }
