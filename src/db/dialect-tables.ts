// A store's tables on the database the server opened. Stores reach every table through `t` (`t.lobbies`), a copy of
// their `./tables` made by `dialectTables`, so one store body serves both databases: it holds SQLite's tables (the
// declarations of db/table.ts) until the server opens PostgreSQL, which points every copy at each table's PostgreSQL
// twin (db/pg/twins.ts, built from the same declaration: same JS names, same row shapes), and back when it closes.
// The twins are built by the PostgreSQL side only, which a SQLite server never loads.
import { is, Table } from 'drizzle-orm'

const stores: { tables: Record<string, unknown>; sqlite: Record<string, unknown> }[] = []

/** A store's tables: a copy of its `./tables` module, swapped to the other dialect's by `useTables`. */
export function dialectTables<T extends object>(sqlite: T): T {
  const tables = { ...sqlite }
  stores.push({ tables: tables as Record<string, unknown>, sqlite: sqlite as Record<string, unknown> })
  return tables
}

/**
 * Point every store's tables at their twins (db/pg/client.ts gives PostgreSQL's, before the first query), or back at
 * SQLite's (undefined).
 */
export function useTables(twinOf: ((table: Table) => Table) | undefined): void {
  for (const { tables, sqlite } of stores)
    for (const [key, table] of Object.entries(sqlite)) {
      if (!is(table, Table)) continue
      tables[key] = twinOf ? twinOf(table) : table
    }
}
