// POST /auth/register: every field of spec §4.5. Returns {token} (and show_verification_form when an invite joined
// the user to a server). Sends the e-mail verification link.
import { uniqueViolation } from '../db/errors'
import { config } from '../config'
import { clock } from '../core/clock'
import { formError } from '../core/errors'
import { consume, perIp, reserve } from '../core/ratelimit'
import { snowflake } from '../core/snowflake'
import { countryOf } from '../geo/country'
import { joinGuildByInvite } from '../guilds/public'
import { suggestUsername, isUsernameTaken } from '../usernames/rules'
import {
  cachedUser,
  findUserByEmail,
  findUserByPhone,
  insertUser,
  updateUser,
  type UserInsert,
} from '../accounts/store'
import type { ClientInfo } from '../accounts/client-info'
import { completeLogin, rememberIp } from '../accounts/complete-login'
import { phoneVerificationInvalid } from '../accounts/errors'
import { claimFingerprint } from '../accounts/fingerprints'
import { emailTaken, tokenInvalid, usernameTaken } from './errors'
import { mailEmailVerification } from './mail'
import type { RegisterInput } from './schemas'
import { issueOneTime, redeemOneTime } from '../accounts/one-time'
import { passwordProblem } from '../accounts/password-policy'
import { hashPassword } from '../accounts/passwords'
import { isPhoneBlocked, rememberPhone } from '../accounts/phone'

const REGISTRATIONS_PER_IP = { limit: 30, windowMs: 3600_000 }
export const VERIFY_EMAIL_TTL_MS = 7 * 24 * 3600_000

/** Explicit consent where the rules ask for it, and wherever the country is unknown (private or unlisted address). */
export function consentRequired(ip: string): boolean {
  const country = countryOf(ip)
  return country === null || config().consentCountries.includes(country)
}

/**
 * The body was checked against RegisterSchema (each field's form, the username rules, the password's length, the date
 * of birth). What is judged here, once the attempt is counted, needs the database, the client's address, two fields
 * together or the common-password look-up (milliseconds); those errors are reported together.
 */
export async function register(input: RegisterInput, client: ClientInfo, headerFingerprint?: string | null) {
  await reserve(perIp('register-ip', client.ip, REGISTRATIONS_PER_IP))
  const refused: Record<string, [code: string, message: string]> = {}
  const username = input.username?.toLowerCase()
  if (!username && !input.global_name) refused.username = ['BASE_TYPE_REQUIRED', 'This field is required']
  else if (username && (await isUsernameTaken(username)))
    refused.username = [
      'USERNAME_ALREADY_TAKEN',
      'Username is unavailable. Try adding numbers, letters, underscores _ , or periods.',
    ]
  const weak = input.password === undefined ? null : passwordProblem(input.password)
  if (weak) refused.password = weak
  const email = input.email?.trim().toLowerCase()
  if (email !== undefined && (await findUserByEmail(email)))
    refused.email = ['EMAIL_ALREADY_REGISTERED', 'Email is already registered.']
  if (email !== undefined && input.password === undefined)
    refused.password = ['BASE_TYPE_REQUIRED', 'This field is required']
  if (consentRequired(client.ip) && input.consent !== true)
    refused.consent = ['CONSENT_REQUIRED', 'You must agree to the Terms of Service and Privacy Policy.']
  if (Object.keys(refused).length) throw formError(refused)

  // Single-use inputs are consumed only once every check passed.
  let phone: string | null = null
  if (input.phone_token !== undefined) {
    const row = await redeemOneTime('phone', input.phone_token)
    phone = row?.data.phone ?? null
    if (!phone || (await isPhoneBlocked(phone)) || (await findUserByPhone(phone))) {
      throw phoneVerificationInvalid()
    }
  }
  const provisionalId = snowflake()
  const id = (await claimFingerprint(input.fingerprint ?? headerFingerprint, provisionalId)) ?? provisionalId
  const values = {
    id,
    username: username || (await suggestUsername(input.global_name)),
    globalName: input.global_name ?? null,
    email: email ?? null,
    phone,
    passwordHash: input.password !== undefined ? await hashPassword(input.password) : null,
    dateOfBirth: input.date_of_birth ?? null,
    promotionalEmailOptIn: input.promotional_email_opt_in ?? false,
    createdAt: clock.now(),
  }
  const user = await insertOrExplain(values)
  await rememberIp(user.id, client.ip)
  if (phone) await rememberPhone(user.id, phone)
  if (email)
    await mailEmailVerification(email, await issueOneTime('verify_email', user.id, VERIFY_EMAIL_TTL_MS, { email }))

  let joined = false
  if (input.invite) {
    // A valid invite is accepted automatically; an invalid one does not stop the registration.
    joined = await joinGuildByInvite(user.id, input.invite).then(
      () => true,
      () => false,
    )
  }
  const { token } = await completeLogin(user, { client, giftCodeSkuId: input.gift_code_sku_id })
  return { token, ...(joined ? { show_verification_form: false } : {}) }
}

/** Two registrations racing for one username or e-mail: the loser gets the form error, not a 500. */
async function insertOrExplain(values: UserInsert) {
  try {
    return await insertUser(values)
  } catch (error) {
    const taken = uniqueViolation(error)
    if (taken === 'users.username') throw usernameTaken()
    if (taken === 'users.email') throw emailTaken()
    if (taken === 'users.phone') throw phoneVerificationInvalid()
    throw error
  }
}

/** POST /auth/verify: the link's token marks the address verified (once) and logs the user in. */
export async function verifyEmail(token: string, client: ClientInfo) {
  const row = await redeemOneTime('verify_email', token)
  const user = row?.userId ? await cachedUser(row.userId) : undefined
  if (!row || !user || user.email !== row.data.email) {
    throw tokenInvalid()
  }
  await updateUser(user.id, { emailVerified: true })
  const { token: session, user_id } = await completeLogin(user, { client })
  return { token: session, user_id }
}

export async function resendVerification(userId: string): Promise<void> {
  await consume('verify-resend', userId, { limit: 3, windowMs: 3600_000 })
  const user = await cachedUser(userId)
  if (!user?.email || user.emailVerified) return
  await mailEmailVerification(
    user.email,
    await issueOneTime('verify_email', user.id, VERIFY_EMAIL_TTL_MS, { email: user.email }),
  )
}
