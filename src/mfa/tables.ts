import { bool, index, int, json, long, snowflake, table, text, timestamp, uniqueIndex } from '../db/table'
import { users } from '../accounts/tables'

/** A user's TOTP secret (base32) and the last time step accepted, so no step is ever accepted twice. */
export const totpSecrets = table('totp_secrets', {
  userId: snowflake()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  secret: text().notNull(),
  lastStep: long().notNull(),
  createdAt: timestamp().notNull(),
})

/** Backup codes, argon2id-hashed (8 characters carry too little entropy for a fast hash). */
export const backupCodes = table(
  'backup_codes',
  {
    id: long().primaryKey({ autoIncrement: true }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text().notNull(),
    consumed: bool().notNull().default(false),
  },
  (t) => [index('backup_codes_user_idx').on(t.userId)],
)

/** SMS as a second factor (the number is the user's verified phone). */
export const smsFactors = table('sms_factors', {
  userId: snowflake()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  createdAt: timestamp().notNull(),
})

export const webauthnCredentials = table(
  'webauthn_credentials',
  {
    id: snowflake().primaryKey(),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** base64url credential id from the authenticator */
    credentialId: text().notNull(),
    /** base64url COSE public key */
    publicKey: text().notNull(),
    counter: long().notNull(),
    transports: json<string[]>().notNull().default([]),
    name: text().notNull(),
    createdAt: timestamp().notNull(),
  },
  (t) => [uniqueIndex('webauthn_credential_id_idx').on(t.credentialId), index('webauthn_user_idx').on(t.userId)],
)

/**
 * MFA tickets: random, stored hashed, bound to a user (and for elevation to the session), short-lived, dead after
 * 5 wrong codes. `purpose`: login | elevate | reset | webauthn_register | conditional.
 */
export const mfaTickets = table(
  'mfa_tickets',
  {
    ticketHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: snowflake().references(() => users.id, { onDelete: 'cascade' }),
    sessionId: text(),
    /** The WebAuthn challenge this server issued with the ticket (base64url). */
    challenge: text(),
    data: json<Record<string, string>>().notNull().default({}),
    attempts: int().notNull().default(0),
    expiresAt: timestamp().notNull(),
  },
  (t) => [index('mfa_tickets_user_idx').on(t.userId)],
)
