// MFA tickets: what a client carries between "MFA required" and the code. Single use on success; five wrong codes
// kill the ticket. Only the hash is stored.
import { and, eq, gt, sql } from 'drizzle-orm'
import { clock } from '../core/clock'
import { randomToken, sha256Hex } from '../core/crypto'
import { ApiError } from '../core/errors'
import { db } from '../db/client'
import { mfaTickets } from './tables'

export type TicketPurpose = 'login' | 'elevate' | 'reset' | 'webauthn_register' | 'conditional'
export type TicketRow = typeof mfaTickets.$inferSelect

export const TICKET_TTL_MS = 10 * 60_000
export const MAX_WRONG_CODES = 5

export const invalidTicket = () => new ApiError(400, 60006, 'Invalid two-factor auth ticket')
export const invalidCode = (message = 'Invalid two-factor code') => new ApiError(400, 60008, message)

export function issueTicket(
  purpose: TicketPurpose,
  userId: string | null,
  options: { sessionId?: string; challenge?: string; data?: Record<string, string>; ttlMs?: number } = {},
): string {
  const ticket = randomToken(32)
  db()
    .insert(mfaTickets)
    .values({
      ticketHash: sha256Hex(ticket),
      purpose,
      userId,
      sessionId: options.sessionId ?? null,
      challenge: options.challenge ?? null,
      data: options.data ?? {},
      expiresAt: clock.now() + (options.ttlMs ?? TICKET_TTL_MS),
    })
    .run()
  return ticket
}

/** A live ticket of this purpose, or 60006. */
export function loadTicket(purpose: TicketPurpose, ticket: unknown): TicketRow {
  if (typeof ticket !== 'string' || !ticket || ticket.length > 256) throw invalidTicket()
  const row = db()
    .select()
    .from(mfaTickets)
    .where(and(eq(mfaTickets.ticketHash, sha256Hex(ticket)), eq(mfaTickets.purpose, purpose), gt(mfaTickets.expiresAt, clock.now())))
    .get()
  if (!row || row.attempts >= MAX_WRONG_CODES) throw invalidTicket()
  return row
}

/** Count a wrong code; the fifth kills the ticket. Returns the 60008 error to throw. */
export function wrongCode(row: TicketRow, message?: string): ApiError {
  db()
    .update(mfaTickets)
    .set({ attempts: sql`${mfaTickets.attempts} + 1` })
    .where(eq(mfaTickets.ticketHash, row.ticketHash))
    .run()
  return invalidCode(message)
}

/** Use the ticket up: true for exactly one caller, even under concurrency. */
export function redeemTicket(row: TicketRow): boolean {
  return !!db()
    .delete(mfaTickets)
    .where(and(eq(mfaTickets.ticketHash, row.ticketHash), sql`${mfaTickets.attempts} < ${MAX_WRONG_CODES}`))
    .returning({ h: mfaTickets.ticketHash })
    .get()
}

export function purgeExpiredTickets(): void {
  db().delete(mfaTickets).where(sql`${mfaTickets.expiresAt} <= ${clock.now()}`).run()
}
