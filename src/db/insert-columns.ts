// The columns of one prepared INSERT, named once: the statement's placeholders and the values that fill them are both
// made from the list (a store used to write each column in the statement, again in the call that fills it, and again
// in its insert type).
import { type Placeholder, type SQL, sql } from 'drizzle-orm'
import { jsonPlaceholder, toJson } from './client'

export type InsertColumns<K extends string> = {
  readonly columns: readonly K[]
  /** The statement's VALUES: a placeholder named as each column, a JSON column's through `jsonPlaceholder`. */
  values(): Record<K, SQL | Placeholder>
  /** The row as written: each column as given, else its fallback, else null. */
  written(row: Partial<Record<K, unknown>>): Record<K, unknown>
  /** The placeholders' values for `row`: as `written` makes them, a JSON column's as JSON text (`toJson`). */
  params(row: Partial<Record<K, unknown>>): Record<K, unknown>
}

/** The column names of an `insertColumns(...)`, for the insert type: `Pick<typeof t.x.$inferInsert, ColumnOf<...>>`. */
export type ColumnOf<C> = C extends InsertColumns<infer K> ? K : never

/**
 * `columns` in the statement's order; `json`: those written as JSON text; `fallbacks`: what a column left out (or given
 * as undefined or null) is written as, where that is not null (the table's default, for a NOT NULL column).
 */
export function insertColumns<const K extends string>(
  columns: readonly K[],
  options: { json?: readonly NoInfer<K>[]; fallbacks?: Partial<Record<NoInfer<K>, unknown>> } = {},
): InsertColumns<K> {
  const fallback = columns.map((c) => (options.fallbacks as Partial<Record<string, unknown>> | undefined)?.[c] ?? null)
  const json = columns.map((c) => options.json?.includes(c) === true)
  const given = (i: number) => `(row[${JSON.stringify(columns[i])}] ?? fallback[${i}])`
  const written = literal(columns, given)
  const params = literal(columns, (i) => (json[i] ? `toJson${given(i)}` : given(i)))
  return {
    columns,
    values: () =>
      Object.fromEntries(columns.map((c, i) => [c, json[i] ? jsonPlaceholder(c) : sql.placeholder(c)])) as Record<
        K,
        SQL | Placeholder
      >,
    written: (row) => written(row, fallback, toJson),
    params: (row) => params(row, fallback, toJson),
  }
}

type Literal<K extends string> = (
  row: Partial<Record<K, unknown>>,
  fallback: unknown[],
  json: typeof toJson,
) => Record<K, unknown>

/**
 * A function that returns one object literal of the columns, each `value(i)` (an expression of `row`, `fallback` and
 * `toJson`), compiled once: an object made key by key in a loop cost about a microsecond more per insert, on the
 * hottest writes. The names are the store's own column names, quoted.
 */
function literal<K extends string>(columns: readonly K[], value: (i: number) => string): Literal<K> {
  const fields = columns.map((c, i) => `${JSON.stringify(c)}: ${value(i)}`)
  return new Function('row', 'fallback', 'toJson', `return { ${fields.join(', ')} }`) as Literal<K>
}
