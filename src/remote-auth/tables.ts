import { index, snowflake, table, text, timestamp } from '../db/table'
import { users } from '../accounts/tables'

/**
 * A desktop waiting on /remote-auth after its nonce proof: its key, where it connects from, and until when its socket
 * lives. A mobile user claims it (user id + sha256 of the handshake token); the row goes when the socket closes, so
 * the handshake token dies with it. Sockets do not outlive the process: rows left at start are deleted.
 */
export const remoteAuthDesktops = table(
  'remote_auth_desktops',
  {
    /** unpadded base64url SHA-256 of the SPKI */
    fingerprint: text().primaryKey(),
    /** standard base64 of the SPKI DER (RSA-2048), to encrypt the user payload and the token */
    publicKey: text().notNull(),
    ip: text().notNull(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    createdAt: timestamp().notNull(),
    /** the socket's deadline (hello + timeout_ms) */
    expiresAt: timestamp().notNull(),
    userId: snowflake().references(() => users.id, { onDelete: 'cascade' }),
    /** sha256 hex of the handshake token */
    handshakeHash: text().unique(),
    claimedAt: timestamp(),
  },
  (t) => [index('remote_auth_desktops_expires_idx').on(t.expiresAt)],
)

/** A finished remote login waiting for the desktop's POST /users/@me/remote-auth/login; single use, 2 minutes. */
export const remoteAuthTickets = table(
  'remote_auth_tickets',
  {
    /** sha256 hex of the ticket */
    ticketHash: text().primaryKey(),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    publicKey: text().notNull(),
    ip: text().notNull(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    createdAt: timestamp().notNull(),
    expiresAt: timestamp().notNull(),
  },
  (t) => [index('remote_auth_tickets_expires_idx').on(t.expiresAt)],
)

export type RemoteAuthDesktopRow = typeof remoteAuthDesktops.$inferSelect
export type RemoteAuthTicketRow = typeof remoteAuthTickets.$inferSelect
