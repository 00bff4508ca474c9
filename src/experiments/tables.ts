import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'
import type { Definition } from './definitions'

/** The loaded experiment definitions, replaced whole by `server experiments load`. */
export const experimentDefinitions = sqliteTable('experiment_definitions', {
  name: text().primaryKey(),
  /** Order in the loaded file (the order of the response arrays). */
  position: integer().notNull(),
  /** The file's element as loaded (validated). */
  definition: text({ mode: 'json' }).$type<Definition>().notNull(),
})

/**
 * One row (id 1): bumped by every load, so a server whose definitions were loaded by another process (the CLI)
 * notices with one cheap read and rebuilds its cache.
 */
export const experimentState = sqliteTable('experiment_state', {
  id: integer().primaryKey(),
  version: integer().notNull(),
  loadedAt: integer().notNull(),
})
