import { sqliteTable, text, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from '../accounts/tables'

/** A user's TOTP secret (base32) and the last time step accepted, so no step is ever accepted twice. */
export const totpSecrets = sqliteTable('totp_secrets', {
  userId: text()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text().notNull(),
  lastStep: integer().notNull(),
  createdAt: integer().notNull(),
})

/** Backup codes, argon2id-hashed (8 characters carry too little entropy for a fast hash). */
export const backupCodes = sqliteTable(
  'backup_codes',
  {
    id: integer().primaryKey({ autoIncrement: true }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text().notNull(),
    consumed: integer({ mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('backup_codes_user_idx').on(t.userId)],
)

/** SMS as a second factor (the number is the user's verified phone). */
export const smsFactors = sqliteTable('sms_factors', {
  userId: text()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: integer().notNull(),
})

export const webauthnCredentials = sqliteTable(
  'webauthn_credentials',
  {
    id: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** base64url credential id from the authenticator */
    credentialId: text().notNull(),
    /** base64url COSE public key */
    publicKey: text().notNull(),
    counter: integer().notNull(),
    transports: text({ mode: 'json' }).$type<string[]>().notNull().default([]),
    name: text().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [uniqueIndex('webauthn_credential_id_idx').on(t.credentialId), index('webauthn_user_idx').on(t.userId)],
)

/**
 * MFA tickets: random, stored hashed, bound to a user (and for elevation to the session), short-lived, dead after
 * 5 wrong codes. `purpose`: login | elevate | reset | webauthn_register | conditional.
 */
export const mfaTickets = sqliteTable(
  'mfa_tickets',
  {
    ticketHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: text().references(() => users.id, { onDelete: 'cascade' }),
    sessionId: text(),
    /** The WebAuthn challenge this server issued with the ticket (base64url). */
    challenge: text(),
    data: text({ mode: 'json' }).$type<Record<string, string>>().notNull().default({}),
    attempts: integer().notNull().default(0),
    expiresAt: integer().notNull(),
  },
  (t) => [index('mfa_tickets_user_idx').on(t.userId)],
)
