import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { users } from '../users/tables'

/** One row per user token. Only hashes of the token and of the session id are stored. */
export const authSessions = sqliteTable(
  'auth_sessions',
  {
    id: text().primaryKey(),
    userId: text().notNull().references(() => users.id, { onDelete: 'cascade' }),
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
  },
  (t) => [index('auth_sessions_user_idx').on(t.userId)],
)

export type AuthSessionRow = typeof authSessions.$inferSelect
