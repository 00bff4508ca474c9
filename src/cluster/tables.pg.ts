// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts).
import { long, pgTable, text } from '../db/pg/columns'

export const gatewayOutbox = pgTable('gateway_outbox', {
  id: long().primaryKey().generatedByDefaultAsIdentity(),
  eventId: text().notNull(),
  entry: text().notNull(),
  createdAt: long().notNull(),
})
