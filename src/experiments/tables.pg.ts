// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { integer, pgTable } from 'drizzle-orm/pg-core'
import { jsonText, long, text } from '../db/pg/columns'
import type { Definition } from './definitions'

export const experimentDefinitions = pgTable('experiment_definitions', {
  name: text().primaryKey(),
  position: integer().notNull(),
  definition: jsonText<Definition>().notNull(),
})

/** SQLite's INTEGER PRIMARY KEY is the rowid, numbered when omitted: an identity column here. */
export const experimentState = pgTable('experiment_state', {
  id: integer().primaryKey().generatedByDefaultAsIdentity(),
  version: integer().notNull(),
  loadedAt: long().notNull(),
})
