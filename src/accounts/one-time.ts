// Single-use tokens (e-mail verification, IP authorization, password reset, e-mail revert, phone, handoff).
// Stored as sha256; redeemed by one DELETE ... RETURNING, so concurrent redemptions yield exactly one winner.
import { and, eq, gt, sql } from 'drizzle-orm'
import { clock } from '../core/clock'
import { randomToken, sha256Hex } from '../core/crypto'
import { db } from '../db/client'
import { oneTimeTokens } from './tables'

export type OneTimePurpose = 'verify_email' | 'authorize_ip' | 'reset_password' | 'revert_email' | 'phone' | 'handoff'
export type OneTimeRow = typeof oneTimeTokens.$inferSelect

export function issueOneTime(purpose: OneTimePurpose, userId: string | null, ttlMs: number, data: Record<string, string> = {}): string {
  const token = randomToken(32)
  const now = clock.now()
  db().insert(oneTimeTokens).values({ tokenHash: sha256Hex(token), purpose, userId, data, createdAt: now, expiresAt: now + ttlMs }).run()
  return token
}

/** Consume a token: returns its row once, then never again; undefined if unknown, expired or used. */
export function redeemOneTime(purpose: OneTimePurpose, token: string): OneTimeRow | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return db()
    .delete(oneTimeTokens)
    .where(and(eq(oneTimeTokens.tokenHash, sha256Hex(token)), eq(oneTimeTokens.purpose, purpose), gt(oneTimeTokens.expiresAt, clock.now())))
    .returning()
    .get()
}

/** Look at a token without consuming it (a reset that must first pass MFA). */
export function peekOneTime(purpose: OneTimePurpose, token: string): OneTimeRow | undefined {
  if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined
  return db()
    .select()
    .from(oneTimeTokens)
    .where(and(eq(oneTimeTokens.tokenHash, sha256Hex(token)), eq(oneTimeTokens.purpose, purpose), gt(oneTimeTokens.expiresAt, clock.now())))
    .get()
}

/** Invalidate a user's outstanding tokens of a purpose (a new reset link replaces the old one). */
export function revokeOneTime(userId: string, purpose: OneTimePurpose): void {
  db().delete(oneTimeTokens).where(and(eq(oneTimeTokens.userId, userId), eq(oneTimeTokens.purpose, purpose))).run()
}

export function purgeExpiredOneTime(): void {
  db().delete(oneTimeTokens).where(sql`${oneTimeTokens.expiresAt} <= ${clock.now()}`).run()
}
