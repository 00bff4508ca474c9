// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { index, pgTable } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { long, text } from '../db/pg/columns'

export const remoteAuthDesktops = pgTable(
  'remote_auth_desktops',
  {
    fingerprint: text().primaryKey(),
    publicKey: text().notNull(),
    ip: text().notNull(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    createdAt: long().notNull(),
    expiresAt: long().notNull(),
    userId: text().references(() => users.id, { onDelete: 'cascade' }),
    handshakeHash: text().unique(),
    claimedAt: long(),
  },
  (t) => [index('remote_auth_desktops_expires_idx').on(t.expiresAt)],
)

export const remoteAuthTickets = pgTable(
  'remote_auth_tickets',
  {
    ticketHash: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    publicKey: text().notNull(),
    ip: text().notNull(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    createdAt: long().notNull(),
    expiresAt: long().notNull(),
  },
  (t) => [index('remote_auth_tickets_expires_idx').on(t.expiresAt)],
)
