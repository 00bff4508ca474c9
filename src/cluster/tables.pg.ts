// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts).
import { index, integer, long, pgTable, text } from '../db/pg/columns'

export const gatewayOutbox = pgTable(
  'gateway_outbox',
  {
    id: long().primaryKey().generatedByDefaultAsIdentity(),
    eventId: text().notNull(),
    entry: text().notNull(),
    createdAt: long().notNull(),
    part: integer().notNull().default(0),
    parts: text().notNull().default(''),
  },
  (t) => [index('gateway_outbox_part').on(t.part, t.id)],
)
