// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { boolean, index, integer, pgTable, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { jsonDefault, jsonText, long, text } from '../db/pg/columns'

export const totpSecrets = pgTable('totp_secrets', {
  userId: text()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text().notNull(),
  lastStep: long().notNull(),
  createdAt: long().notNull(),
})

export const backupCodes = pgTable(
  'backup_codes',
  {
    id: long().primaryKey().generatedByDefaultAsIdentity(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text().notNull(),
    consumed: boolean().notNull().default(false),
  },
  (t) => [index('backup_codes_user_idx').on(t.userId)],
)

export const smsFactors = pgTable('sms_factors', {
  userId: text()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: long().notNull(),
})

/** counter: the authenticator's signature counter, an unsigned 32-bit number (bigint). */
export const webauthnCredentials = pgTable(
  'webauthn_credentials',
  {
    id: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    credentialId: text().notNull(),
    publicKey: text().notNull(),
    counter: long().notNull(),
    transports: jsonText<string[]>().notNull().default(jsonDefault([])),
    name: text().notNull(),
    createdAt: long().notNull(),
  },
  (t) => [uniqueIndex('webauthn_credential_id_idx').on(t.credentialId), index('webauthn_user_idx').on(t.userId)],
)

export const mfaTickets = pgTable(
  'mfa_tickets',
  {
    ticketHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: text().references(() => users.id, { onDelete: 'cascade' }),
    sessionId: text(),
    challenge: text(),
    data: jsonText<Record<string, string>>().notNull().default(jsonDefault({})),
    attempts: integer().notNull().default(0),
    expiresAt: long().notNull(),
  },
  (t) => [index('mfa_tickets_user_idx').on(t.userId)],
)
