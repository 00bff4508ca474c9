// Single-use tokens (e-mail verification, IP authorization, password reset, e-mail revert, phone, handoff).
// Stored as sha256; redeemed by one DELETE ... RETURNING, so concurrent redemptions yield exactly one winner.
import { clock } from '../core/clock'
import { randomToken, sha256Hex } from '../core/crypto'
import {
  deleteExpiredOneTime,
  deleteOneTimeOf,
  findOneTime,
  insertOneTime,
  takeOneTime,
  type OneTimeRow,
} from './store'

export type OneTimePurpose = 'verify_email' | 'authorize_ip' | 'reset_password' | 'revert_email' | 'phone' | 'handoff'
export type { OneTimeRow }

export async function issueOneTime(
  purpose: OneTimePurpose,
  userId: string | null,
  ttlMs: number,
  data: Record<string, string> = {},
): Promise<string> {
  const token = randomToken(32)
  const now = clock.now()
  await insertOneTime({ tokenHash: sha256Hex(token), purpose, userId, data, createdAt: now, expiresAt: now + ttlMs })
  return token
}

/** Consume a token: returns its row once, then never again; undefined if unknown, expired or used. */
export async function redeemOneTime(purpose: OneTimePurpose, token: string): Promise<OneTimeRow | undefined> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return await takeOneTime(sha256Hex(token), purpose, clock.now())
}

/** Look at a token without consuming it (a reset that must first pass MFA). */
export async function peekOneTime(purpose: OneTimePurpose, token: string): Promise<OneTimeRow | undefined> {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return await findOneTime(sha256Hex(token), purpose, clock.now())
}

/** Invalidate a user's outstanding tokens of a purpose (a new reset link replaces the old one). */
export async function revokeOneTime(userId: string, purpose: OneTimePurpose): Promise<void> {
  await deleteOneTimeOf(userId, purpose)
}

export async function purgeExpiredOneTime(): Promise<void> {
  await deleteExpiredOneTime(clock.now())
}
