import { sqliteTable, text, integer, primaryKey } from 'drizzle-orm/sqlite-core'
import { authSessions } from '../accounts/tables'

/** Push tokens registered by a session (unregistered on logout). */
export const pushDevices = sqliteTable(
  'push_devices',
  {
    sessionId: text()
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    provider: text().notNull(),
    token: text().notNull(),
    voipProvider: text(),
    voipToken: text(),
    createdAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.provider, t.token] })],
)
