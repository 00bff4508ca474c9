// What an App holds of its SQLite database (AppState.database): its connections, the write mutex, the group-commit
// queue, and the PostgreSQL backend when it runs on one; and the types the files of db/ share.
import type { Database, Statement } from 'bun:sqlite'
import type { Column, Table } from 'drizzle-orm'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { appState } from '../core/app'
import type { BatchEnd, QueuedOptions } from './transactions'

export type DB = BunSQLiteDatabase

// ---- The database server (PostgreSQL), when the server runs on one

/**
 * What db/pg/client.ts gives when DATABASE_URL names a PostgreSQL server: the same functions as below, on its pool.
 * Until it is installed (and always on SQLite) each exported function below runs its SQLite body; the check is one
 * read of a module variable.
 */
export type Backend = {
  db(): DB
  prepared<T>(build: (db: DB) => T): () => T
  write<T>(fn: (tx: DB) => T | Promise<T>): Promise<T>
  transaction<T>(fn: (tx: DB) => T | Promise<T>): Promise<T>
  queuedTransaction<T>(fn: (tx: DB) => T | Promise<T>, options?: QueuedOptions): Promise<T>
  /** Locks the parent row of a count-then-write check (lockForUpdate). */
  lockRow(tx: DB, table: Table, column: Column, value: string): Promise<void>
  /** Takes a lock on a name until the transaction ends (lockName). */
  lockName(tx: DB, name: string): Promise<void>
  dataVersion(): number
  /** Once the transactions under way when asked have ended, their after-commit work done (settledCommits). */
  settled(): Promise<void>
  close(): Promise<void>
}

// ---- Connections

/** One connection: its slot, the database opening it belongs to (`epoch`), its prepared statements (by `prepared()`'s id). */
export type Conn = {
  slot: number
  epoch: number
  handle: Database
  db: DB
  control: Map<string, Statement>
  statements: unknown[]
}

/** How many snapshot connections `reading()` may hold at once; past them a snapshot reads on the read connection. */
export const SNAPSHOT_READERS = 8

export type Queued = {
  fn: (tx: DB) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** What this App (core/app.ts) holds of its database: connections, the write mutex, the group-commit queue. */
const newDatabase = () => ({
  /** PostgreSQL's functions when the service runs on it (db/pg/client.ts). */
  backend: undefined as Backend | undefined,
  epoch: 0,
  file: undefined as string | undefined,
  /** The folder of a `:memory:` database's file (removed when it is closed). */
  tempDir: undefined as string | undefined,
  writer: undefined as Conn | undefined,
  reader: undefined as Conn | undefined,
  snapshotsOpened: 0,
  idleSnapshots: [] as Conn[],
  /** Bumped when a write scope that forgot cached rows ends: a snapshot begun before may hold what they replaced. */
  generation: 0,
  /** The write mutex, and who waits for it in order. */
  locked: false,
  waiting: [] as (() => void)[],
  /** Writes waiting for the next group-commit batch. */
  queue: [] as Queued[],
  /** The stores' writes deferred to a batch's end (atBatchEnd). */
  batchEnds: [] as BatchEnd[],
})
declare module '../core/app' {
  interface AppState {
    database: ReturnType<typeof newDatabase>
  }
}
export const own = appState('database', newDatabase)
