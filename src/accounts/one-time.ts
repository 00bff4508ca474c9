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

export function issueOneTime(
  purpose: OneTimePurpose,
  userId: string | null,
  ttlMs: number,
  data: Record<string, string> = {},
): string {
  const token = randomToken(32)
  const now = clock.now()
  insertOneTime({ tokenHash: sha256Hex(token), purpose, userId, data, createdAt: now, expiresAt: now + ttlMs })
  return token
}

/** Consume a token: returns its row once, then never again; undefined if unknown, expired or used. */
export function redeemOneTime(purpose: OneTimePurpose, token: string): OneTimeRow | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return takeOneTime(sha256Hex(token), purpose, clock.now())
}

/** Look at a token without consuming it (a reset that must first pass MFA). */
export function peekOneTime(purpose: OneTimePurpose, token: string): OneTimeRow | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return findOneTime(sha256Hex(token), purpose, clock.now())
}

/** Invalidate a user's outstanding tokens of a purpose (a new reset link replaces the old one). */
export function revokeOneTime(userId: string, purpose: OneTimePurpose): void {
  deleteOneTimeOf(userId, purpose)
}

export function purgeExpiredOneTime(): void {
  deleteExpiredOneTime(clock.now())
}
