import { primaryKey, snowflake, table, text, timestamp } from '../db/table'
import { authSessions } from '../accounts/tables'

/** Push tokens registered by a session (unregistered on logout). */
export const pushDevices = table(
  'push_devices',
  {
    sessionId: snowflake()
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    provider: text().notNull(),
    token: text().notNull(),
    voipProvider: text(),
    voipToken: text(),
    createdAt: timestamp().notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.provider, t.token] })],
)
