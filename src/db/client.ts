// One SQLite file through bun:sqlite, wrapped by Drizzle. Opened once by main.ts (or the test harness).
//
// Store functions are async (docs/DESIGN.md, "Stores are async"): a write transaction may span an `await`, and on one
// connection a statement another request runs meanwhile would join that open transaction (and read its uncommitted
// rows). So the file is opened on several connections:
// - the write connection: every write transaction (`transaction`, `queuedTransaction`) and every write outside one
//   (`write`) runs on it behind one process-wide async mutex, one at a time;
// - the read connection (`PRAGMA query_only`): reads outside a write transaction; in WAL mode it sees committed rows
//   only;
// - snapshot connections (up to SNAPSHOT_READERS, opened when first needed): `reading()` gives a request's reads one
//   snapshot on a connection of its own.
// Which connection a statement runs on belongs to the async context (AsyncLocalStorage): inside a write transaction
// (or a write, or a group-commit batch) the write connection, inside `reading()` its snapshot, else the read
// connection. "Inside a write transaction" is that context, never inferred from a connection's state.
//
// Its parts: state.ts (what an App holds of its database), connections.ts (opening, closing, the write mutex),
// scope.ts (the async context, reads), transactions.ts (writes, transactions, group commit), commit-holders.ts (what
// a transaction holds for its COMMIT), direct.ts (the direct prepared-statement path), dialect.ts (SQLite or
// PostgreSQL in a query). Stores import them all from here.
import { direct } from './direct'
import { current } from './scope'
import { type Backend, type DB, own } from './state'

export * from './commit-holders'
export { closeDatabase, DatabaseOpenError, databaseSize, openDatabase, openSqlite, rawDatabase } from './connections'
export * from './dialect'
export {
  endWrite,
  inPipelinedBatch,
  inQueuedBatch,
  inWriteTransaction,
  newWriteScope,
  reading,
  readsAreCurrent,
  scopes,
  type WriteScope,
  writeScope,
} from './scope'
export type { Backend, DB } from './state'
export * from './transactions'

/**
 * Once every transaction under way in this process when asked has ended and done its after-commit work (the events
 * and session calls it gave): undefined on SQLite, where a COMMIT and that work run in one synchronous step. For a
 * reader that found a row gone and must not act before what replaced it is applied (gateway credential checks).
 */
export function settledCommits(): Promise<void> | undefined {
  return own().backend?.settled()
}

/** Run every store on this backend from now on (db/pg/client.ts, at start); undefined: back to SQLite. */
export function useBackend(next: Backend | undefined): void {
  own().backend = next
  if (next) own().epoch += 1
}

/**
 * Which opening of a database this service's statements run on: it moves when another database is opened (tests, a
 * restore, PostgreSQL at start), and what was kept of the previous one (caches, secrets) is dropped when it does.
 */
export const databaseEpoch = (): number => own().epoch

/** The Drizzle database of this context: the write connection inside a write scope, else a read connection. */
export function db(): DB {
  const backend = own().backend
  if (backend) return backend.db()
  return current().db
}

/** How many prepared() statements are declared: each one's index in every connection's `statements`. */
let preparedCount = 0

/**
 * A prepared statement (a Drizzle one) built on first use on each connection it runs on, rebuilt when the database
 * is reopened. Hot paths use it: prepared statements roughly double throughput on bun:sqlite. It runs through
 * `direct()` below. A write statement run outside a write scope runs on a read connection, which refuses it.
 */
export function prepared<T>(build: (db: DB) => T): () => T {
  const id = preparedCount++
  let forBackend: Backend | undefined
  let onBackend: () => T = () => undefined as T
  return () => {
    const backend = own().backend
    if (backend) {
      if (forBackend !== backend) onBackend = (forBackend = backend).prepared(build)
      return onBackend()
    }
    const c = current()
    return (c.statements[id] ??= direct(build(c.db))) as T
  }
}
