import { sqliteTable, text, integer, index, primaryKey } from 'drizzle-orm/sqlite-core'

export const users = sqliteTable('users', {
  id: text().primaryKey(),
  /** Lower-case unique handle (Discord's post-2023 usernames). */
  username: text().notNull().unique(),
  globalName: text(),
  discriminator: text().notNull().default('0'),
  avatar: text(),
  /** Lower-cased for uniqueness; null for bots. */
  email: text().unique(),
  emailVerified: integer({ mode: 'boolean' }).notNull().default(false),
  /** E.164 */
  phone: text().unique(),
  passwordHash: text(),
  /** The password policy's verdict on the current password (null: not judged yet; judged at the next login). */
  passwordWeak: integer({ mode: 'boolean' }),
  bot: integer({ mode: 'boolean' }).notNull().default(false),
  flags: integer().notNull().default(0),
  locale: text().notNull().default('en-US'),
  theme: text().notNull().default('dark'),
  /** ISO date (YYYY-MM-DD) */
  dateOfBirth: text(),
  /** active | disabled (by the user) | deletion_scheduled */
  state: text().notNull().default('active'),
  /** Flagged by an operator: every login must go through a password reset first. */
  compromised: integer({ mode: 'boolean' }).notNull().default(false),
  promotionalEmailOptIn: integer({ mode: 'boolean' }).notNull().default(false),
  createdAt: integer().notNull(),
})

export type UserRow = typeof users.$inferSelect

/** One row per user token. Only hashes of the token and of the session id are stored. */
export const authSessions = sqliteTable(
  'auth_sessions',
  {
    id: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** sha256 hex of the token */
    tokenHash: text().notNull().unique(),
    /** base64 sha256 of the session id, as Discord shows it */
    idHash: text().notNull().unique(),
    createdAt: integer().notNull(),
    lastUsedAt: integer().notNull(),
    ip: text(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    loginSource: text(),
    giftCodeSkuId: text(),
  },
  (t) => [index('auth_sessions_user_idx').on(t.userId)],
)

/**
 * Single-use secrets mailed, texted or handed to clients (e-mail verification, new-IP authorization, password reset,
 * e-mail revert, phone tokens, handoff). Stored as sha256; redeemed by one DELETE ... RETURNING, so exactly once.
 */
export const oneTimeTokens = sqliteTable(
  'one_time_tokens',
  {
    tokenHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: text().references(() => users.id, { onDelete: 'cascade' }),
    data: text({ mode: 'json' }).$type<Record<string, string>>().notNull().default({}),
    createdAt: integer().notNull(),
    expiresAt: integer().notNull(),
  },
  (t) => [index('one_time_tokens_user_idx').on(t.userId, t.purpose)],
)

/** IPs a user has logged in from (or confirmed by e-mail): logins from others need confirmation. */
export const knownIps = sqliteTable(
  'known_ips',
  {
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ip: text().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.ip] })],
)

/** SMS verification codes, one live code per phone and purpose; stored hashed. */
export const phoneCodes = sqliteTable(
  'phone_codes',
  {
    phone: text().notNull(),
    purpose: text().notNull(),
    codeHash: text().notNull(),
    attempts: integer().notNull().default(0),
    expiresAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.phone, t.purpose] })],
)

/** Fingerprints handed out to unauthenticated clients; `valid` false past the per-IP allowance. */
export const fingerprints = sqliteTable('fingerprints', {
  id: text().primaryKey(),
  valid: integer({ mode: 'boolean' }).notNull(),
  ip: text().notNull(),
  createdAt: integer().notNull(),
  /** Set when a registration took this fingerprint's id. */
  usedBy: text(),
})

/** Phone numbers removed by an account revert; no account may add them again. */
export const blockedPhones = sqliteTable('blocked_phones', {
  phone: text().primaryKey(),
  createdAt: integer().notNull(),
})

export type AuthSessionRow = typeof authSessions.$inferSelect

/** Every phone number an account has had, so an account revert can block them all. */
export const userPhones = sqliteTable(
  'user_phones',
  {
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    phone: text().notNull(),
    addedAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.phone] })],
)
