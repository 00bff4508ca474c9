// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { boolean, index, integer, pgTable } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { jsonDefault, jsonText, long, text } from '../db/pg/columns'

export const applications = pgTable('applications', {
  id: text().primaryKey(),
  name: text().notNull(),
  ownerId: text().references(() => users.id, { onDelete: 'set null' }),
  botUserId: text()
    .notNull()
    .references(() => users.id),
  botTokenHash: text().notNull().unique(),
  clientSecretHash: text().notNull(),
  redirectUris: jsonText<string[]>().notNull().default(jsonDefault([])),
  flags: long().notNull().default(0),
  createdAt: long().notNull(),
  verifyKey: text(),
  signingKey: text(),
  eventWebhooksUrl: text(),
  eventWebhooksStatus: integer().notNull().default(1),
  lockedAt: long(),
})

export const oauth2Tokens = pgTable(
  'oauth2_tokens',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    accessTokenHash: text().notNull().unique(),
    refreshTokenHash: text().unique(),
    familyId: text().notNull(),
    expiresAt: long().notNull(),
    refreshExpiresAt: long(),
    refreshUsedAt: long(),
    publicClient: boolean().notNull().default(false),
    createdAt: long().notNull(),
  },
  (t) => [
    index('oauth2_tokens_family_idx').on(t.familyId),
    index('oauth2_tokens_user_app_idx').on(t.userId, t.applicationId),
  ],
)

export const oauth2Codes = pgTable(
  'oauth2_codes',
  {
    codeHash: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    redirectUri: text().notNull(),
    redirectUriGiven: boolean().notNull(),
    codeChallenge: text(),
    familyId: text().notNull(),
    usedAt: long(),
    expiresAt: long().notNull(),
    createdAt: long().notNull(),
    guildId: text(),
  },
  (t) => [index('oauth2_codes_expires_idx').on(t.expiresAt)],
)
