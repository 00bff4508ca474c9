// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { pgTable, primaryKey } from 'drizzle-orm/pg-core'
import { authSessions } from '../accounts/tables.pg'
import { long, text } from '../db/pg/columns'

export const pushDevices = pgTable(
  'push_devices',
  {
    sessionId: text()
      .notNull()
      .references(() => authSessions.id, { onDelete: 'cascade' }),
    provider: text().notNull(),
    token: text().notNull(),
    voipProvider: text(),
    voipToken: text(),
    createdAt: long().notNull(),
  },
  (t) => [primaryKey({ columns: [t.sessionId, t.provider, t.token] })],
)
