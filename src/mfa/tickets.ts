// MFA tickets: what a client carries between "MFA required" and the code. Single use on success; five wrong codes
// kill the ticket. Only the hash is stored.
import { clock } from '../core/clock'
import { randomToken, sha256Hex } from '../core/crypto'
import type { ApiError } from '../core/errors'
import { invalidCode, invalidTicket } from './errors'
import { countWrongCode, deleteExpiredTickets, findLiveTicket, insertTicket, takeTicket, type TicketRow } from './store'

export type TicketPurpose = 'login' | 'elevate' | 'reset' | 'webauthn_register' | 'conditional'
export type { TicketRow }

export const TICKET_TTL_MS = 10 * 60_000
export const MAX_WRONG_CODES = 5
/** Per client address: codes tried, codes texted, passwordless logins started. */
export const MFA_PER_IP = { limit: 60, windowMs: 10 * 60_000 }

export async function issueTicket(
  purpose: TicketPurpose,
  userId: string | null,
  options: { sessionId?: string; challenge?: string; data?: Record<string, string>; ttlMs?: number } = {},
): Promise<string> {
  const ticket = randomToken(32)
  await insertTicket({
    ticketHash: sha256Hex(ticket),
    purpose,
    userId,
    sessionId: options.sessionId ?? null,
    challenge: options.challenge ?? null,
    data: options.data ?? {},
    expiresAt: clock.now() + (options.ttlMs ?? TICKET_TTL_MS),
  })
  return ticket
}

/** A live ticket of this purpose, or 60006. */
export async function loadTicket(purpose: TicketPurpose, ticket: unknown): Promise<TicketRow> {
  if (typeof ticket !== 'string' || !ticket || ticket.length > 256) throw invalidTicket()
  const row = await findLiveTicket(sha256Hex(ticket), purpose, clock.now())
  if (!row || row.attempts >= MAX_WRONG_CODES) throw invalidTicket()
  return row
}

/** Count a wrong code; the fifth kills the ticket. Returns the 60008 error to throw. */
export async function wrongCode(row: TicketRow, message?: string): Promise<ApiError> {
  await countWrongCode(row.ticketHash)
  return invalidCode(message)
}

/** Use the ticket up: true for exactly one caller, even under concurrency. */
export async function redeemTicket(row: TicketRow): Promise<boolean> {
  return await takeTicket(row.ticketHash, MAX_WRONG_CODES)
}

export async function purgeExpiredTickets(): Promise<void> {
  await deleteExpiredTickets(clock.now())
}
