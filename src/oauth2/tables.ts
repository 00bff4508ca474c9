import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { users } from '../users/tables'

export const applications = sqliteTable('applications', {
  id: text().primaryKey(),
  name: text().notNull(),
  ownerId: text().references(() => users.id, { onDelete: 'set null' }),
  botUserId: text().notNull().references(() => users.id),
  /** sha256 hex of the bot token */
  botTokenHash: text().notNull().unique(),
  /** sha256 hex of the client secret */
  clientSecretHash: text().notNull(),
  redirectUris: text({ mode: 'json' }).$type<string[]>().notNull().default([]),
  flags: integer().notNull().default(0),
  createdAt: integer().notNull(),
})

/** OAuth2 access grants: one row per issued access token (refresh tokens rotate within a family). */
export const oauth2Tokens = sqliteTable(
  'oauth2_tokens',
  {
    id: text().primaryKey(),
    applicationId: text().notNull().references(() => applications.id, { onDelete: 'cascade' }),
    userId: text().notNull().references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    accessTokenHash: text().notNull().unique(),
    refreshTokenHash: text().unique(),
    familyId: text().notNull(),
    expiresAt: integer().notNull(),
    createdAt: integer().notNull(),
  },
  (t) => [index('oauth2_tokens_family_idx').on(t.familyId)],
)

export type ApplicationRow = typeof applications.$inferSelect
export type OAuth2TokenRow = typeof oauth2Tokens.$inferSelect
