// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { boolean, index, integer, pgTable, primaryKey } from 'drizzle-orm/pg-core'
import { jsonDefault, jsonText, long, text } from '../db/pg/columns'

export const users = pgTable('users', {
  id: text().primaryKey(),
  username: text().notNull().unique(),
  globalName: text(),
  discriminator: text().notNull().default('0'),
  avatar: text(),
  email: text().unique(),
  emailVerified: boolean().notNull().default(false),
  phone: text().unique(),
  passwordHash: text(),
  passwordWeak: boolean(),
  bot: boolean().notNull().default(false),
  flags: long().notNull().default(0),
  locale: text().notNull().default('en-US'),
  theme: text().notNull().default('dark'),
  dateOfBirth: text(),
  state: text().notNull().default('active'),
  compromised: boolean().notNull().default(false),
  promotionalEmailOptIn: boolean().notNull().default(false),
  createdAt: long().notNull(),
})

export const authSessions = pgTable(
  'auth_sessions',
  {
    id: text().primaryKey(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text().notNull().unique(),
    idHash: text().notNull().unique(),
    createdAt: long().notNull(),
    lastUsedAt: long().notNull(),
    ip: text(),
    clientOs: text(),
    clientPlatform: text(),
    clientLocation: text(),
    loginSource: text(),
    giftCodeSkuId: text(),
  },
  (t) => [index('auth_sessions_user_idx').on(t.userId)],
)

export const oneTimeTokens = pgTable(
  'one_time_tokens',
  {
    tokenHash: text().primaryKey(),
    purpose: text().notNull(),
    userId: text().references(() => users.id, { onDelete: 'cascade' }),
    data: jsonText<Record<string, string>>().notNull().default(jsonDefault({})),
    createdAt: long().notNull(),
    expiresAt: long().notNull(),
  },
  (t) => [index('one_time_tokens_user_idx').on(t.userId, t.purpose)],
)

export const knownIps = pgTable(
  'known_ips',
  {
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ip: text().notNull(),
    createdAt: long().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.ip] })],
)

export const phoneCodes = pgTable(
  'phone_codes',
  {
    phone: text().notNull(),
    purpose: text().notNull(),
    codeHash: text().notNull(),
    attempts: integer().notNull().default(0),
    expiresAt: long().notNull(),
  },
  (t) => [primaryKey({ columns: [t.phone, t.purpose] })],
)

export const fingerprints = pgTable('fingerprints', {
  id: text().primaryKey(),
  valid: boolean().notNull(),
  ip: text().notNull(),
  createdAt: long().notNull(),
  usedBy: text(),
})

export const blockedPhones = pgTable('blocked_phones', {
  phone: text().primaryKey(),
  createdAt: long().notNull(),
})

export const userPhones = pgTable(
  'user_phones',
  {
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    phone: text().notNull(),
    addedAt: long().notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.phone] })],
)
