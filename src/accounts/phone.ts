// Phone numbers: E.164 validation and SMS verification codes (6 digits, 10 minutes, single use, 5 tries,
// stored as an HMAC keyed by a server secret, rate-limited per IP and per phone).
import { createHmac } from 'node:crypto'
import { clock } from '../core/clock'
import { randomDigits } from '../core/crypto'
import { perIp, reserve } from '../core/ratelimit'
import { getSecret } from '../db/secrets'
import { sendSms } from '../delivery'
import {
  blockPhonesOfUser,
  countPhoneCodeAttempt,
  insertUserPhone,
  isPhoneBlocked,
  livePhoneCodePurposes,
  takePhoneCode,
  upsertPhoneCode,
} from './store'

export { isPhoneBlocked }

const PHONE_CODE_TTL_MS = 10 * 60_000
const MAX_ATTEMPTS = 5
const SMS_PER_IP = { limit: 10, windowMs: 3600_000 }
const SMS_PER_PHONE = { limit: 5, windowMs: 3600_000 }

/** What a texted code is for; an MFA login code is bound to its ticket (`mfa:<ticket hash>`). */
export type PhonePurpose = 'register' | 'verify' | 'reset' | `mfa:${string}`

export function isE164(phone: unknown): phone is string {
  return typeof phone === 'string' && /^\+[1-9]\d{6,14}$/.test(phone)
}

export function maskPhone(phone: string): string {
  return `${phone.slice(0, 1)}${'*'.repeat(Math.max(phone.length - 5, 0))}${phone.slice(-4)}`
}

async function codeHash(phone: string, purpose: string, code: string): Promise<string> {
  return createHmac('sha256', await getSecret('phone-codes'))
    .update(`${purpose}:${phone}:${code}`)
    .digest('hex')
}

/** Text a new code (replacing any earlier one for this phone and purpose). */
export async function issuePhoneCode(
  phone: string,
  purpose: PhonePurpose,
  ip: string,
  message = 'Your verification code is',
): Promise<void> {
  // Both or neither: a refused text does not use up the other allowance.
  await reserve(perIp('sms-ip', ip, SMS_PER_IP), ['sms-phone', phone, SMS_PER_PHONE])
  const code = randomDigits(6)
  await upsertPhoneCode(phone, purpose, await codeHash(phone, purpose, code), clock.now() + PHONE_CODE_TTL_MS)
  await sendSms({ to: phone, body: `${message} ${code}` })
}

/** True once for the right code within its life; wrong codes count towards killing it. */
export async function verifyPhoneCode(phone: string, code: string, purpose: PhonePurpose): Promise<boolean> {
  if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return await failAttempt(phone, purpose)
  return (await takePhoneCode(phone, purpose, await codeHash(phone, purpose, code), clock.now(), MAX_ATTEMPTS))
    ? true
    : await failAttempt(phone, purpose)
}

async function failAttempt(phone: string, purpose: string): Promise<false> {
  await countPhoneCodeAttempt(phone, purpose)
  return false
}

/** Which purposes have a live code for this phone (phone verification answers for the flow that sent it). */
export async function pendingPurposes(phone: string): Promise<string[]> {
  return await livePhoneCodePurposes(phone, clock.now())
}

/** Keep a number an account has had (an account revert blocks them all). */
export async function rememberPhone(userId: string, phone: string): Promise<void> {
  await insertUserPhone(userId, phone)
}

/** Remove a user's phone and block every number the account ever had. */
export async function blockPhonesOf(userId: string): Promise<void> {
  await blockPhonesOfUser(userId)
}
