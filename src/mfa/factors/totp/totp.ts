// TOTP (RFC 6238: SHA-1, 6 digits, 30 s) with ±1 step of skew and no step ever accepted twice for a user:
// the step is claimed with one guarded UPDATE, so two parallel requests with the same code cannot both pass.
import type * as OTPAuth from 'otpauth'
import { clock } from '../../../core/clock'
import { claimTotpStep, deleteTotpSecret, findTotpSecret, hasTotpSecret, insertTotpSecret } from '../../store'

// otpauth (~1-2 ms of module loading) on the first TOTP check rather than at every start.
const otpauth = () => require('otpauth') as typeof OTPAuth

const PERIOD_S = 30
const SECRET_BYTES = 20 // 160 bits

/** The secret's bytes if it is base32 of exactly 160 bits (spaces ignored, any case); otherwise undefined. */
export function parseSecret(secret: string): string | undefined {
  const clean = secret.replace(/\s+/g, '').toUpperCase().replace(/=+$/, '')
  if (!/^[A-Z2-7]+$/.test(clean)) return undefined
  const { Secret } = otpauth()
  try {
    return Secret.fromBase32(clean).bytes.length === SECRET_BYTES ? clean : undefined
  } catch {
    return undefined
  }
}

/** The time step a code matches within ±1 step of now, or undefined. */
export function matchingStep(secret: string, code: string): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined
  const { Secret, TOTP } = otpauth()
  const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: PERIOD_S })
  const now = clock.now()
  const delta = totp.validate({ token: code, timestamp: now, window: 1 })
  return delta === null ? undefined : Math.floor(now / 1000 / PERIOD_S) + delta
}

export async function hasTotp(userId: string): Promise<boolean> {
  return await hasTotpSecret(userId)
}

/**
 * Check a code against the user's secret and claim its step: 'ok' once per step; 'used' for a code of the window
 * whose step (or a later one) was already accepted; 'wrong' otherwise.
 */
export async function verifyTotp(userId: string, code: string): Promise<'ok' | 'used' | 'wrong'> {
  const row = await findTotpSecret(userId)
  if (!row) return 'wrong'
  const step = matchingStep(row.secret, code.replace(/\s+/g, ''))
  if (step === undefined) return 'wrong'
  return (await claimTotpStep(userId, step)) ? 'ok' : 'used'
}

/** Enrol a secret; false when the user already has one (two parallel enables: one wins). */
export async function saveTotp(userId: string, secret: string, step: number): Promise<boolean> {
  return await insertTotpSecret(userId, secret, step)
}

export async function removeTotp(userId: string): Promise<void> {
  await deleteTotpSecret(userId)
}
