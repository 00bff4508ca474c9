// Column kinds of the PostgreSQL mirror (src/**/tables.pg.ts), chosen so each one behaves as its SQLite original:
// - text is `text COLLATE "C"`: compared and ordered byte by byte, as SQLite's BINARY collation does (ids, names,
//   usernames, hashes), whatever locale the operator's cluster was made with; lower() folds ASCII only, as SQLite's;
// - JSON is that same text, written with JSON.stringify and read with JSON.parse (SQLite's `text({ mode: 'json' })`),
//   so what is stored is the same characters on both; a default is SQL text (`jsonDefault`), as drizzle-kit writes
//   a JSON value default of a custom column as `[object Object]`;
// - booleans are `boolean`; integers are `integer`, or `bigint` read as a JS number where a value can pass 2^31
//   (ms timestamps, flag bit fields, the WebAuthn counter, autoincrement ids); SQLite's INTEGER is 64-bit.
// Only the PostgreSQL tables import this file: nothing of it is reachable from src/main.ts (tests/db/pg-apart.test.ts).
import { type SQL, sql } from 'drizzle-orm'
import { bigint, customType } from 'drizzle-orm/pg-core'

export { boolean, index, integer, pgTable, primaryKey, uniqueIndex } from 'drizzle-orm/pg-core'

/** SQLite's `text()`: byte-ordered text. */
export const text = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
})

/** SQLite's `text({ mode: 'json' })`: JSON in text, byte-ordered like the rest. */
export function jsonText<T>() {
  return customType<{ data: T; driverData: string }>({
    dataType: () => 'text COLLATE "C"',
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })()
}

/** The DEFAULT of a JSON text column: the value's JSON as an SQL string literal. */
export function jsonDefault(value: unknown): SQL {
  return sql.raw(`'${JSON.stringify(value).replaceAll("'", "''")}'`)
}

/** An INTEGER that may pass 2^31 (ms timestamps, bit fields), read and written as a JS number. */
export function long() {
  return bigint({ mode: 'number' })
}
