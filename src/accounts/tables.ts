import { bool, index, int, json, long, primaryKey, snowflake, table, text, timestamp } from '../db/table'

export const users = table('users', {
  id: snowflake().primaryKey(),
  /** Lower-case unique handle (Discord's post-2023 usernames). */
  username: text().notNull().unique(),
  globalName: text(),
  discriminator: text().notNull().default('0'),
  avatar: text(),
  /** Lower-cased for uniqueness; null for bots. */
  email: text().unique(),
  emailVerified: bool().notNull().default(false),
  /** E.164 */
  phone: text().unique(),
  passwordHash: text(),
  /** The password policy's verdict on the current password (null: not judged yet; judged at the next login). */
  passwordWeak: bool(),
  bot: bool().notNull().default(false),
  flags: long().notNull().default(0),
  locale: text().notNull().default('en-US'),
  theme: text().notNull().default('dark'),
  /** ISO date (YYYY-MM-DD) */
  dateOfBirth: text(),
  /** active | disabled (by the user) | deletion_scheduled */
  state: text().notNull().default('active'),
  /** Flagged by an operator: every login must go through a password reset first. */
  compromised: bool().notNull().default(false),
  promotionalEmailOptIn: bool().notNull().default(false),
  createdAt: timestamp().notNull(),
})

export type UserRow = typeof users.$inferSelect

/** One row per user token. Only hashes of the token and of the session id are stored. */
export const authSessions = table(
  'auth_sessions',
  {
    id: snowflake().primaryKey(),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** sha256 hex of the token */
    tokenHash: text().notNull().unique(),
    /** base64 sha256 of the session id, as Discord shows it */
    idHash: text().notNull().unique(),
    createdAt: timestamp().notNull(),
    lastUsedAt: timestamp().notNull(),
    ip: text(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    loginSource: text(),
    giftCodeSkuId: snowflake(),
  },
  (t) => [index('auth_sessions_user_idx').on(t.userId)],
)

/**
 * Single-use secrets mailed, texted or handed to clients (e-mail verification, new-IP authorization, password reset,
 * e-mail revert, phone tokens, handoff). Stored as sha256; redeemed by one DELETE ... RETURNING, so exactly once.
 */
export const oneTimeTokens = table(
  'one_time_tokens',
  {
    tokenHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: snowflake().references(() => users.id, { onDelete: 'cascade' }),
    data: json<Record<string, string>>().notNull().default({}),
    createdAt: timestamp().notNull(),
    expiresAt: timestamp().notNull(),
  },
  (t) => [index('one_time_tokens_user_idx').on(t.userId, t.purpose)],
)

/** IPs a user has logged in from (or confirmed by e-mail): logins from others need confirmation. */
export const knownIps = table(
  'known_ips',
  {
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ip: text().notNull(),
    createdAt: timestamp().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.ip] })],
)

/** SMS verification codes, one live code per phone and purpose; stored hashed. */
export const phoneCodes = table(
  'phone_codes',
  {
    phone: text().notNull(),
    purpose: text().notNull(),
    codeHash: text().notNull(),
    attempts: int().notNull().default(0),
    expiresAt: timestamp().notNull(),
  },
  (t) => [primaryKey({ columns: [t.phone, t.purpose] })],
)

/** Fingerprints handed out to unauthenticated clients; `valid` false past the per-IP allowance. */
export const fingerprints = table('fingerprints', {
  id: text().primaryKey(),
  valid: bool().notNull(),
  ip: text().notNull(),
  createdAt: timestamp().notNull(),
  /** Set when a registration took this fingerprint's id. */
  usedBy: text(),
})

/** Phone numbers removed by an account revert; no account may add them again. */
export const blockedPhones = table('blocked_phones', {
  phone: text().primaryKey(),
  createdAt: timestamp().notNull(),
})

export type AuthSessionRow = typeof authSessions.$inferSelect

/** Every phone number an account has had, so an account revert can block them all. */
export const userPhones = table(
  'user_phones',
  {
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    phone: text().notNull(),
    addedAt: timestamp().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.phone] })],
)
