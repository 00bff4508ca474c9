// The async context: which connection a request's statements run on — inside a write transaction (or a write, or a
// group-commit batch) the write connection, inside `reading()` its snapshot, else the read connection.
import { AsyncLocalStorage } from 'node:async_hooks'
import type { CommitHolder } from './commit-holders'
import { connect, control, opened, openReader } from './connections'
import { type Conn, type DB, own, SNAPSHOT_READERS } from './state'

/** A write transaction, a group-commit batch or a write outside a transaction, on the write connection. */
export type WriteScope = {
  readonly write: true
  /** False once it ended: work started inside it that outlives it runs outside. */
  open: boolean
  /** A group-commit batch: a store may defer its writes to the batch's end (atBatchEnd). */
  batch: boolean
  /** A batch whose writes run side by side, pipelined (PostgreSQL, independent writes): all or nothing. */
  pipelined?: boolean
  /**
   * A write of the pipelined batch asked for a savepoint, which would roll back its neighbours' statements sent
   * meanwhile on the shared connection: the batch runs again one write at a time (db/pg/client.ts).
   */
  unpipeline?: boolean
  /** Open savepoints (a transaction inside a transaction). */
  depth: number
  /** Run when it ends, committed or not: db/cache.ts forgets again what it forgot during the scope. */
  ends: (() => void)[] | undefined
  /**
   * A transaction: run inside it once its work is done, just before what it holds goes out with its COMMIT
   * (readyToCommit): what is known only then and must commit with it (db/cache.ts: what other nodes must forget).
   */
  atCommit?: (() => void)[]
  /** db/cache.ts's bookkeeping: what each cache forgot during the scope. */
  marks: Map<object, unknown> | undefined
  /** On PostgreSQL: the connection (its Drizzle database and postgres-js client): a transaction's, or the pool. */
  server?: { db: DB; client: unknown; transaction: boolean }
  /** On PostgreSQL: it took a lock (lockForUpdate, lockName): from then on it reads the database, not the caches. */
  locked?: boolean
  /** A transaction (not a write whose statements commit one by one): what it holds for its COMMIT (holdForCommit). */
  held?: { holder: CommitHolder<unknown>; item: unknown }[]
  /**
   * On PostgreSQL: statements sent and not awaited (sendWithCommit, a batch's deferred writes): they go out with the
   * COMMIT, which waits for their answers (one that failed makes the transaction throw its error).
   */
  sent?: Promise<unknown>[]
}

/** `reading()`: the snapshot connection it holds (taken at its first statement), and the commits seen by then. */
export type ReadScope = { readonly write: false; open: boolean; conn: Conn | undefined; since: number }

/** Exported for db/pg/client.ts, which keeps its write scopes in the same context (the caches read them). */
export const scopes = new AsyncLocalStorage<WriteScope | ReadScope>()

export const newWriteScope = (batch: boolean): WriteScope => ({
  write: true,
  open: true,
  batch,
  depth: 0,
  ends: undefined,
  marks: undefined,
})

export function endWrite(scope: WriteScope): void {
  scope.open = false
  if (!scope.ends) return
  own().generation += 1
  for (const end of scope.ends) end()
}

/** The write scope this async context is inside, if one is open. */
export function writeScope(): WriteScope | undefined {
  const s = scopes.getStore()
  return s !== undefined && s.open && s.write ? s : undefined
}

/** A write transaction is open in this context: what it reads may still be rolled back (db/cache.ts keeps none of it). */
export function inWriteTransaction(): boolean {
  return writeScope() !== undefined
}

/** A group-commit batch is running in this context: a store may defer its write to the batch's end (atBatchEnd). */
export const inQueuedBatch = (): boolean => writeScope()?.batch === true

/**
 * A batch whose writes run side by side, their statements pipelined (PostgreSQL, independent writes; they stand or
 * fall together): a write a store makes once for all of them (atBatchEnd) may go out beside the first of them, in
 * the same round trip, rather than at the end, one round trip more.
 */
export const inPipelinedBatch = (): boolean => writeScope()?.pipelined === true

/**
 * Whether rows read now may be cached as current: true outside a write scope, unless this context reads a snapshot
 * begun before the last commit that forgot cached rows (it may show rows they replaced). Inside a write scope
 * db/cache.ts decides by what the scope wrote.
 */
export function readsAreCurrent(): boolean {
  const s = scopes.getStore()
  if (s === undefined || !s.open || s.write) return true
  return s.conn === undefined || s.conn === own().reader || s.since === own().generation
}

/** The connection this context's statements run on. */
export function current(): Conn {
  const s = scopes.getStore()
  if (s !== undefined && s.open) {
    if (s.write) return opened()
    return s.conn ?? beginSnapshot(s)
  }
  const reader = own().reader
  if (!reader) throw new Error('database is not open')
  return reader
}

// ---- Reads

/** A snapshot connection for this `reading()` scope, its read transaction begun (the snapshot starts at its first read). */
function beginSnapshot(s: ReadScope): Conn {
  let c = own().idleSnapshots.pop()
  const file = own().file
  if (!c && own().snapshotsOpened < SNAPSHOT_READERS && file) {
    c = connect(2 + own().snapshotsOpened, openReader(file))
    own().snapshotsOpened += 1
  }
  s.since = own().generation
  if (!c) return (s.conn = own().reader!) // every snapshot connection is held: each statement reads committed rows
  control(c, 'BEGIN DEFERRED').run()
  return (s.conn = c)
}

function endRead(s: ReadScope): void {
  s.open = false
  const c = s.conn
  if (!c || c === own().reader) return
  try {
    // Nothing was written: COMMIT ends the read transaction whether fn returned or threw.
    if (c.handle.inTransaction) control(c, 'COMMIT').run()
  } catch {}
  if (c.epoch === own().epoch && own().writer) own().idleSnapshots.push(c)
  else c.handle.close()
}

/**
 * Run fn's reads in one snapshot (one read transaction on a connection of its own, taken at its first statement, so
 * a request whose rows are all cached takes none): they see one state of the database, and the WAL read lock is
 * taken once instead of once per statement. For the several reads of one request; fn only reads. Inside a write
 * scope, or another `reading()`, it just runs fn.
 */
export async function reading<T>(fn: () => T | Promise<T>): Promise<T> {
  if (own().backend) return fn() // each statement reads what is committed (READ COMMITTED); the caches check versions
  const s = scopes.getStore()
  if (s !== undefined && s.open) return fn()
  const scope: ReadScope = { write: false, open: true, conn: undefined, since: 0 }
  try {
    return await scopes.run(scope, fn)
  } finally {
    endRead(scope)
  }
}
