// Phone numbers: E.164 validation and SMS verification codes (6 digits, 10 minutes, single use, 5 tries,
// stored as an HMAC keyed by a server secret, rate-limited per IP and per phone).
import { and, eq, gt, sql } from 'drizzle-orm'
import { createHmac } from 'node:crypto'
import { clock } from '../core/clock'
import { randomDigits } from '../core/crypto'
import { reserve } from '../core/ratelimit'
import { db } from '../db/client'
import { getSecret } from '../db/secrets'
import { sendSms } from '../delivery'
import { blockedPhones, phoneCodes, userPhones } from './tables'

export const PHONE_CODE_TTL_MS = 10 * 60_000
const MAX_ATTEMPTS = 5
export const SMS_PER_IP = { limit: 10, windowMs: 3600_000 }
export const SMS_PER_PHONE = { limit: 5, windowMs: 3600_000 }

/** What a texted code is for; an MFA login code is bound to its ticket (`mfa:<ticket hash>`). */
export type PhonePurpose = 'register' | 'verify' | 'reset' | `mfa:${string}`

export function isE164(phone: unknown): phone is string {
  return typeof phone === 'string' && /^\+[1-9]\d{6,14}$/.test(phone)
}

export function maskPhone(phone: string): string {
  return `${phone.slice(0, 1)}${'*'.repeat(Math.max(phone.length - 5, 0))}${phone.slice(-4)}`
}

export function isPhoneBlocked(phone: string): boolean {
  return !!db().select().from(blockedPhones).where(eq(blockedPhones.phone, phone)).get()
}

function codeHash(phone: string, purpose: string, code: string): string {
  return createHmac('sha256', getSecret('phone-codes')).update(`${purpose}:${phone}:${code}`).digest('hex')
}

/** Text a new code (replacing any earlier one for this phone and purpose). */
export async function issuePhoneCode(phone: string, purpose: PhonePurpose, ip: string, message = 'Your verification code is'): Promise<void> {
  // Both or neither: a refused text does not use up the other allowance.
  reserve(['sms-ip', ip, SMS_PER_IP], ['sms-phone', phone, SMS_PER_PHONE])
  const code = randomDigits(6)
  db()
    .insert(phoneCodes)
    .values({ phone, purpose, codeHash: codeHash(phone, purpose, code), attempts: 0, expiresAt: clock.now() + PHONE_CODE_TTL_MS })
    .onConflictDoUpdate({
      target: [phoneCodes.phone, phoneCodes.purpose],
      set: { codeHash: codeHash(phone, purpose, code), attempts: 0, expiresAt: clock.now() + PHONE_CODE_TTL_MS },
    })
    .run()
  await sendSms({ to: phone, body: `${message} ${code}` })
}

/** True once for the right code within its life; wrong codes count towards killing it. */
export function verifyPhoneCode(phone: string, code: string, purpose: PhonePurpose): boolean {
  if (typeof code !== 'string' || !/^\d{6}$/.test(code)) return failAttempt(phone, purpose)
  const used = db()
    .delete(phoneCodes)
    .where(
      and(
        eq(phoneCodes.phone, phone),
        eq(phoneCodes.purpose, purpose),
        eq(phoneCodes.codeHash, codeHash(phone, purpose, code)),
        gt(phoneCodes.expiresAt, clock.now()),
        sql`${phoneCodes.attempts} < ${MAX_ATTEMPTS}`,
      ),
    )
    .returning()
    .get()
  return used ? true : failAttempt(phone, purpose)
}

function failAttempt(phone: string, purpose: string): false {
  db()
    .update(phoneCodes)
    .set({ attempts: sql`${phoneCodes.attempts} + 1` })
    .where(and(eq(phoneCodes.phone, phone), eq(phoneCodes.purpose, purpose)))
    .run()
  return false
}

/** Which purposes have a live code for this phone (phone verification answers for the flow that sent it). */
export function pendingPurposes(phone: string): string[] {
  return db()
    .select({ purpose: phoneCodes.purpose })
    .from(phoneCodes)
    .where(and(eq(phoneCodes.phone, phone), gt(phoneCodes.expiresAt, clock.now())))
    .all()
    .map((r) => r.purpose)
}

/** Keep a number an account has had (an account revert blocks them all). */
export function rememberPhone(userId: string, phone: string): void {
  db().insert(userPhones).values({ userId, phone, addedAt: clock.now() }).onConflictDoNothing().run()
}

/** Remove a user's phone and block every number the account ever had. */
export function blockPhonesOf(userId: string): void {
  const phones = db().select({ phone: userPhones.phone }).from(userPhones).where(eq(userPhones.userId, userId)).all()
  for (const { phone } of phones) db().insert(blockedPhones).values({ phone, createdAt: clock.now() }).onConflictDoNothing().run()
}
