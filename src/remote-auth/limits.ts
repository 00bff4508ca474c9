// Remote-auth limits that are not settings. Timers and the per-IP socket count are in config (REMOTE_AUTH_*).

/** Largest client frame, in bytes of its compact JSON. */
export const MAX_FRAME_BYTES = 4096
/** Remote-auth sockets open at once on this server, all IPs together. */
export const MAX_SOCKETS = 10_000
/**
 * Frames one socket may send in its life: the handshake, two heartbeats per interval, and some slack. Past it the
 * socket closes 1008 (a flood, not a client).
 */
export function frameBudget(timeoutMs: number, heartbeatMs: number): number {
  return 16 + 2 * Math.ceil(timeoutMs / heartbeatMs)
}
/** A missed heartbeat: no heartbeat for this many intervals. */
export const HEARTBEAT_GRACE = 1.5
/** Mobile requests (create, finish, cancel) per user. */
export const MOBILE_REQUESTS = { limit: 10, windowMs: 60_000 }
/** Ticket exchanges per IP. */
export const LOGIN_REQUESTS = { limit: 30, windowMs: 60_000 }
/** How long a ticket can be exchanged. */
export const TICKET_TTL_MS = 2 * 60_000
/** How often the sweeper looks at deadlines (it reads clock.now()). */
export const SWEEP_EVERY_MS = 1000
