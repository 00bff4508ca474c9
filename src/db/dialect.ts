// What differs between SQLite and PostgreSQL in a store's query, chosen when it is built or run: JSON parameters, a
// list of ids as a table, the integer order of snowflakes, and the row and name locks of PostgreSQL.
import { type Column, SQL, type SQLWrapper, sql, type Table } from 'drizzle-orm'
import { writeScope } from './scope'
import { type DB, own } from './state'

/**
 * A placeholder for a JSON (`text({ mode: 'json' })`) column of a prepared insert or update, filled with `toJson(value)`.
 * Drizzle encodes a plain `sql.placeholder` with the column's encoder, which turns null into the text 'null' (where an
 * unprepared query stores NULL); this one is passed through as given.
 */
export const jsonPlaceholder = (name: string) => sql`${sql.placeholder(name)}`

/** The value for a `jsonPlaceholder`: JSON text, or NULL for null and undefined. */
export const toJson = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value)

/**
 * A list of ids as one JSON array parameter (`JSON.stringify(ids)` for the placeholder `name`), as a table `ids` whose
 * `ids.value` is each id: `.from(idsTable()).crossJoin(t).where(eq(t.id, idValue))`. One prepared statement serves every
 * length, and CROSS JOIN keeps SQLite from reordering: one index probe per id, whatever its statistics say (with stale
 * statistics `id IN (SELECT value FROM json_each(?))` may scan the whole table).
 */
export const idsTable = (name = 'ids') =>
  own().backend
    ? sql`json_array_elements_text(${sql.placeholder(name)}::json) as ids(value)`
    : sql`json_each(${sql.placeholder(name)}) as ids`
export const idValue = sql`ids.value`

/**
 * `f` of a query's result: at once on SQLite (where the result is a plain value), once it arrives on PostgreSQL (a
 * promise). For a cache's load that must stay one synchronous step on SQLite.
 */
export function andThen<T, U>(result: T, f: (rows: T) => U): U {
  return result instanceof Promise ? (result.then(f) as U) : f(result)
}

/**
 * `CAST(value AS INTEGER)` on SQLite, `CAST(value AS bigint)` on PostgreSQL (both 64-bit): the order of snowflake ids,
 * spelled as each database's expression index is (`(channel_id, CAST(id AS ...))`). Chosen when a query is built.
 */
export function asInteger(value: unknown): SQL {
  const sqlite = sql`CAST(${value} AS INTEGER)`
  const postgres = sql`CAST(${value} AS bigint)`
  const late: SQLWrapper = { getSQL: () => (own().backend ? postgres : sqlite) }
  return sql`${late}`
}

/**
 * Lock the parent row of a count-then-write check until the transaction ends (`SELECT ... FOR UPDATE`): two
 * transactions that count a lobby's members (or a user's rows, a guild's roles) and then insert take turns, so the
 * limit holds under PostgreSQL's READ COMMITTED. Nothing to do on SQLite, where writes already run one at a time.
 * docs/DESIGN.md lists the callers.
 */
export async function lockForUpdate(tx: DB, table: Table, column: Column, value: string): Promise<void> {
  const backend = own().backend
  if (!backend) return
  await backend.lockRow(tx, table, column, value)
  lockedNow()
}

/** Reads after a lock go to the database: a commit the lock waited for may not have reached the caches yet. */
function lockedNow(): void {
  const scope = writeScope()
  if (scope) scope.locked = true
}

/**
 * Lock a name until the transaction ends (PostgreSQL: `pg_advisory_xact_lock`), where the row to lock may not exist
 * yet (two PUT /lobbies with one new secret: one creates, the other joins). Nothing to do on SQLite.
 */
export async function lockName(tx: DB, name: string): Promise<void> {
  const backend = own().backend
  if (!backend) return
  await backend.lockName(tx, name)
  lockedNow()
}
