import { int, json, table, text, timestamp } from '../db/table'
import type { Definition } from './definitions'

/** The loaded experiment definitions, replaced whole by `server experiments load`. */
export const experimentDefinitions = table('experiment_definitions', {
  name: text().primaryKey(),
  /** Order in the loaded file (the order of the response arrays). */
  position: int().notNull(),
  /** The file's element as loaded (validated). */
  definition: json<Definition>().notNull(),
})

/**
 * One row (id 1): bumped by every load, so a server whose definitions were loaded by another process (the CLI)
 * notices with one cheap read and rebuilds its cache.
 */
export const experimentState = table('experiment_state', {
  id: int().primaryKey(),
  version: int().notNull(),
  loadedAt: timestamp().notNull(),
})
