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
  const json = new Set<string>(options.json)
  const fallbacks: Partial<Record<string, unknown>> = options.fallbacks ?? {}
  const written = (row: Partial<Record<K, unknown>>) => {
    const out = {} as Record<K, unknown>
    for (const c of columns) out[c] = row[c] ?? fallbacks[c] ?? null
    return out
  }
  return {
    columns,
    values: () =>
      Object.fromEntries(columns.map((c) => [c, json.has(c) ? jsonPlaceholder(c) : sql.placeholder(c)])) as Record<
        K,
        SQL | Placeholder
      >,
    written,
    params: (row) => {
      const out = written(row)
      for (const c of json) out[c as K] = toJson(out[c as K])
      return out
    },
  }
}
