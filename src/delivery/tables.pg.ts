// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { index, pgTable } from 'drizzle-orm/pg-core'
import { long, text } from '../db/pg/columns'

export const outbox = pgTable(
  'outbox',
  {
    id: text().primaryKey(),
    channel: text().$type<'email' | 'sms'>().notNull(),
    to: text().notNull(),
    subject: text(),
    body: text().notNull(),
    status: text().notNull(),
    createdAt: long().notNull(),
  },
  (t) => [index('outbox_to_idx').on(t.to)],
)
