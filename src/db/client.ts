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
import { Database, Statement, type SQLQueryBindings } from 'bun:sqlite'
import { AsyncLocalStorage } from 'node:async_hooks'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Column, is, noopDecoder, Param, Placeholder, sql, SQL, type SQLWrapper, Subquery, Table } from 'drizzle-orm'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { perApp } from '../core/app-context'
import { log } from '../core/log'
import { applyMigrations, SchemaTooNewError } from './migrate'

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

/** A database that cannot be opened or used: one line for the operator, no stack. */
export class DatabaseOpenError extends Error {}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string }
  const message = String(e?.message ?? error).split('\n')[0]
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message
}

/** Open the file with the server's pragmas (and create its folder), without touching its schema. */
export function openSqlite(path: string, { syncFull = false, create = true } = {}): Database {
  try {
    if (path !== ':memory:' && create) mkdirSync(dirname(path), { recursive: true })
    const handle = new Database(path, { create, strict: true })
    // busy_timeout first: it must apply before switching to WAL (PocketBase's order).
    handle.exec('PRAGMA busy_timeout = 10000')
    handle.exec('PRAGMA journal_mode = WAL')
    handle.exec(`PRAGMA synchronous = ${syncFull ? 'FULL' : 'NORMAL'}`)
    handle.exec('PRAGMA foreign_keys = ON')
    handle.exec('PRAGMA temp_store = MEMORY')
    return handle
  } catch (error) {
    throw new DatabaseOpenError(`cannot open database ${path}: ${reason(error)}`)
  }
}

/** A read connection to the (already WAL) file: it refuses every write, so a write that missed the mutex fails loudly. */
function openReader(path: string): Database {
  const handle = new Database(path, { create: false, strict: true })
  handle.exec('PRAGMA busy_timeout = 10000')
  handle.exec('PRAGMA query_only = 1')
  handle.exec('PRAGMA temp_store = MEMORY')
  return handle
}

// ---- Connections

/** One connection: its slot, the database opening it belongs to (`epoch`), its prepared statements (by `prepared()`'s id). */
type Conn = {
  slot: number
  epoch: number
  handle: Database
  db: DB
  control: Map<string, Statement>
  statements: unknown[]
}

/** How many snapshot connections `reading()` may hold at once; past them a snapshot reads on the read connection. */
const SNAPSHOT_READERS = 8

type Queued = {
  fn: (tx: DB) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/** What this service (core/app-context.ts) holds of its database: connections, the write mutex, the group-commit queue. */
const own = perApp(() => ({
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
}))

/** The folder of a `:memory:` database's file (removed when it is closed). */

function connect(slot: number, handle: Database): Conn {
  return {
    slot,
    epoch: own().epoch,
    handle,
    db: drizzle({ client: handle, casing: 'snake_case' }),
    control: new Map(),
    statements: [],
  }
}

/** A statement of the connection's own (BEGIN, COMMIT, SAVEPOINT ...), prepared once per connection. */
function control(c: Conn, text: string): Statement {
  let statement = c.control.get(text)
  if (!statement) c.control.set(text, (statement = c.handle.prepare(text)))
  return statement
}

/**
 * Open the database: the write connection (migrations applied), then the read connection. `:memory:` is a file in a
 * temp folder, removed when it is closed: a read connection needs a file (the data lives as long as the process, as
 * an in-memory database's would).
 */
export function openDatabase(path: string, { syncFull = false } = {}): DB {
  let target = path
  let temp: string | undefined
  if (path === ':memory:') {
    temp = mkdtempSync(join(tmpdir(), 'lobby-memory-'))
    target = join(temp, 'database.sqlite')
  }
  const handle = openSqlite(target, { syncFull })
  let applied: string[]
  try {
    applied = applyMigrations(handle)
  } catch (error) {
    handle.close()
    if (error instanceof SchemaTooNewError) throw new DatabaseOpenError(`cannot use database ${path}: ${error.message}`)
    throw new DatabaseOpenError(`cannot migrate database ${path}: ${reason(error)}`)
  }
  for (const tag of applied) log.notice('migration applied', { migration: tag, database: path })
  // Fresh planner statistics, bounded work (SQLite's advice for long-lived connections): the statistics recorded at
  // the last close may describe a nearly empty database.
  handle.exec('PRAGMA analysis_limit = 400')
  handle.exec('PRAGMA optimize = 0x10002')
  let readHandle: Database
  try {
    readHandle = openReader(target)
  } catch (error) {
    handle.close()
    throw new DatabaseOpenError(`cannot open database ${path}: ${reason(error)}`)
  }
  if (own().writer) closeConnections()
  own().epoch += 1
  own().file = target
  own().tempDir = temp
  const writer = connect(0, handle)
  own().writer = writer
  own().reader = connect(1, readHandle)
  return writer.db
}

function closeConnections(): void {
  for (const c of own().idleSnapshots.splice(0)) c.handle.close()
  own().snapshotsOpened = 0
  const { reader, writer } = own()
  reader?.handle.close()
  try {
    writer?.handle.exec('PRAGMA optimize')
  } catch {}
  // The write connection last: the last connection to close checkpoints the WAL into the file.
  writer?.handle.close()
  const tempDir = own().tempDir
  if (tempDir) rmSync(tempDir, { recursive: true, force: true })
  own().writer = own().reader = undefined
  own().file = own().tempDir = undefined
}

/** Close every connection, once the write under way (if any) has finished. */
export async function closeDatabase(): Promise<void> {
  const closing = own().backend
  if (closing) {
    own().backend = undefined
    return closing.close()
  }
  if (!own().writer) return
  await lock()
  try {
    closeConnections()
  } finally {
    unlock()
  }
}

/** Refresh the planner's statistics where they are stale (housekeeping runs it every 10 minutes). It may write. */
export async function optimizeDatabase(): Promise<void> {
  if (own().backend) return // PostgreSQL's autovacuum keeps its statistics
  return await write(() => {
    own().writer?.handle.exec('PRAGMA optimize')
  })
}

/** Bytes the database takes on disk: the file and its write-ahead log. */
export function databaseSize(path: string): number {
  let total = 0
  for (const f of [path, `${path}-wal`]) {
    try {
      total += statSync(f).size
    } catch {}
  }
  return total
}

function opened(): Conn {
  const writer = own().writer
  if (!writer) throw new Error('database is not open')
  return writer
}

/** The write connection's bun:sqlite handle: tests that write around the stores, and the CLI's backup. */
export function rawDatabase(): Database {
  return opened().handle
}

// ---- The async context: which connection this request's statements run on

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

/**
 * What a transaction holds for its COMMIT, by whoever gave it (the Gateway's dispatches): `before` runs inside the
 * transaction just before COMMIT with the items still held (those of a rolled-back savepoint are dropped), `after`
 * once it committed (after its scope ended); neither runs when it rolls back.
 *
 * `before` sends its statements before its first await: on PostgreSQL they go out with the COMMIT, in one round trip
 * (a statement that fails makes PostgreSQL answer the COMMIT with ROLLBACK, and the transaction throws its error).
 * `behind` (PostgreSQL only), if given, runs one transaction of the holder's with `run`, called before its first
 * await: on the committing connection, its first statements sent right behind the COMMIT, before its answer (so it
 * runs whether or not the COMMIT succeeded). `after` gets what it gave; on SQLite it is not run (undefined).
 */
export type CommitHolder<T, B = unknown> = {
  before?(items: T[]): void | Promise<void>
  behind?(items: T[], run: <R>(fn: (tx: DB) => Promise<R>) => Promise<R>): Promise<B> | undefined
  after(items: T[], behind: Promise<B> | undefined): void | Promise<void>
}

/** Hold `item` for the COMMIT of the transaction this context is in; false outside one (the caller acts now). */
export function holdForCommit<T, B>(holder: CommitHolder<T, B>, item: T): boolean {
  const held = writeScope()?.held
  if (!held) return false
  held.push({ holder: holder as unknown as CommitHolder<unknown>, item })
  return true
}

/**
 * A write whose answer the caller does not need (no rows, no count). Inside a transaction on PostgreSQL it is sent and
 * not awaited: it goes out with what follows, and the COMMIT (or its savepoint's end) waits for its answer and throws
 * its error. Elsewhere it is awaited (on SQLite it has already run).
 */
export async function sendWithCommit(statement: unknown): Promise<void> {
  const sent = writeScope()?.sent
  if (sent === undefined || !(statement instanceof Promise)) {
    await statement
    return
  }
  statement.catch(() => {})
  sent.push(statement)
}

/** Where a savepoint begins in what its transaction holds (rolling back to it drops what came after). */
export const heldMark = (scope: WriteScope): number => scope.held?.length ?? 0
export function dropHeldSince(scope: WriteScope, mark: number): void {
  if (scope.held && scope.held.length > mark) scope.held.length = mark
}

/** The held items by holder, in the order each holder first held one. */
function heldByHolder(scope: WriteScope): Map<CommitHolder<unknown>, unknown[]> | undefined {
  if (!scope.held?.length) return undefined
  const by = new Map<CommitHolder<unknown>, unknown[]>()
  for (const { holder, item } of scope.held) {
    const items = by.get(holder)
    if (items) items.push(item)
    else by.set(holder, [item])
  }
  return by
}

/**
 * A transaction's work is done: its atCommit hooks, then each holder's `before` (beforeCommit), in the scope. Undefined
 * when nothing is held.
 */
export function readyToCommit(scope: WriteScope): Promise<void> | undefined {
  // Most transactions have neither (one server: dispatches are held for after the COMMIT only): no scope to enter.
  if (scope.atCommit === undefined && !scope.held?.some((h) => h.holder.before !== undefined)) return undefined
  return scopes.run(scope, () => {
    for (const hook of scope.atCommit ?? []) hook()
    return beforeCommit(scope)
  })
}

/**
 * Inside the transaction, just before COMMIT: each holder's `before`, all of them called before any is awaited (their
 * statements go out together). Undefined when nothing is held.
 */
export function beforeCommit(scope: WriteScope): Promise<void> | undefined {
  // One server holds dispatches for after the COMMIT only: nothing to run (and no await) before it.
  if (!scope.held?.some((h) => h.holder.before !== undefined)) return undefined
  const by = heldByHolder(scope)
  if (!by) return undefined
  return Promise.all([...by].map(([holder, items]) => holder.before?.(items))).then(() => undefined)
}

type Behind = NonNullable<CommitHolder<unknown>['behind']>
/** What the holders' `behind` transactions gave, by holder (the PostgreSQL backend starts them behind its COMMIT). */
export type BehindResults = Map<CommitHolder<unknown>, Promise<unknown> | undefined>

/**
 * Right behind the COMMIT (PostgreSQL): each holder's `behind`; the first one's transaction runs with `first` (on the
 * committing connection), any other's as a transaction of its own. Undefined when no holder has one.
 */
export function startBehind(scope: WriteScope, first: Parameters<Behind>[1]): BehindResults | undefined {
  if (!scope.held?.some((h) => h.holder.behind !== undefined)) return undefined
  const results: BehindResults = new Map()
  let run: Parameters<Behind>[1] | undefined = first
  for (const [holder, items] of heldByHolder(scope) ?? []) {
    if (!holder.behind) continue
    const promise = holder.behind(items, run ?? transaction)
    promise?.catch(() => {})
    results.set(holder, promise)
    run = undefined
  }
  return results
}

/**
 * Once committed: each holder's `after` (with what its `behind` gave, which the PostgreSQL backend started behind
 * its COMMIT); what fails is logged (the write stands). Undefined when nothing is held.
 */
export function afterCommit(scope: WriteScope, behind?: BehindResults): Promise<void> | undefined {
  const by = heldByHolder(scope)
  scope.held = undefined
  if (!by) return undefined
  const waits: Promise<void>[] = []
  for (const [holder, items] of by) {
    try {
      const done = holder.after(items, behind?.get(holder))
      if (done instanceof Promise) waits.push(done)
    } catch (error) {
      log.error('work after a commit failed', { error: String(error) })
    }
  }
  if (waits.length === 0) return undefined
  return Promise.all(waits).then(
    () => undefined,
    (error) => log.error('work after a commit failed', { error: String(error) }),
  )
}

/** `reading()`: the snapshot connection it holds (taken at its first statement), and the commits seen by then. */
type ReadScope = { readonly write: false; open: boolean; conn: Conn | undefined; since: number }

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
function current(): Conn {
  const s = scopes.getStore()
  if (s !== undefined && s.open) {
    if (s.write) return opened()
    return s.conn ?? beginSnapshot(s)
  }
  const reader = own().reader
  if (!reader) throw new Error('database is not open')
  return reader
}

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

// ---- Running Drizzle's prepared statements without its per-call work

/** What a Drizzle bun-sqlite prepared query holds (drizzle-orm/bun-sqlite/session.js, PreparedQuery). */
type DrizzlePrepared = {
  stmt: Statement
  query: { params: unknown[] }
  fields?: { path: string[]; field: unknown }[]
  customResultMapper?: unknown
  joinsNotNullableMap?: Record<string, boolean>
}

type Decoder = { mapFromDriverValue(value: unknown): unknown }

/** How each parameter is filled: a constant, a placeholder, or a placeholder through a column's encoder. */
function compileParams(params: unknown[]): ((values: Record<string, unknown>) => unknown[]) | undefined {
  const fillers = params.map((p): ((values: Record<string, unknown>) => unknown) => {
    const named = (name: string, encode?: (v: unknown) => unknown) => (values: Record<string, unknown>) => {
      if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`)
      return encode ? encode(values[name]) : values[name]
    }
    if (is(p, Placeholder)) return named(p.name)
    if (is(p, Param) && is(p.value, Placeholder)) {
      const encoder = p.encoder
      return named(p.value.name, (v) => encoder.mapToDriverValue(v))
    }
    return () => p
  })
  if (fillers.length === 0) return () => []
  return (values) => fillers.map((fill) => fill(values))
}

/** Drizzle's mapResultRow for one fixed list of fields, resolved once: keys, and a decoder only where one is needed. */
function compileRow(
  fields: { path: string[]; field: unknown }[],
): ((row: unknown[]) => Record<string, unknown>) | undefined {
  if (fields.some((f) => f.path.length < 1 || f.path.length > 2)) return undefined
  const identity = (d: Decoder) =>
    d.mapFromDriverValue === Column.prototype.mapFromDriverValue ||
    d.mapFromDriverValue === noopDecoder.mapFromDriverValue
  const columns = fields.map(({ path, field }) => {
    const f = field as { decoder?: Decoder; sql?: { decoder: Decoder }; _?: { sql: { decoder: Decoder } } }
    const decoder: Decoder = is(field, Column)
      ? (field as Decoder)
      : is(field, SQL)
        ? f.decoder!
        : is(field, Subquery)
          ? f._!.sql.decoder
          : f.sql!.decoder
    return {
      outer: path.length === 2 ? path[0] : undefined,
      key: path[path.length - 1],
      decoder: identity(decoder) ? undefined : decoder,
    }
  })
  return (row) => {
    const result: Record<string, unknown> = {}
    for (let i = 0; i < columns.length; i++) {
      const { outer, key, decoder } = columns[i]
      const raw = row[i]
      const value = raw === null || decoder === undefined ? raw : decoder.mapFromDriverValue(raw)
      if (outer === undefined) result[key] = value
      else ((result[outer] ??= {}) as Record<string, unknown>)[key] = value
    }
    return result
  }
}

/**
 * A Drizzle prepared query whose get/all/values/run call the bun:sqlite statement directly: the parameters are
 * filled and the rows mapped by functions compiled once, where Drizzle resolves every parameter and every column
 * again on each call (about a third of a 50-row read). Same results as Drizzle's (same statement, same decoders);
 * any shape it does not cover (custom mappers, left joins, deeper nesting) keeps Drizzle's own methods. It reads
 * Drizzle's private fields: tests/db/direct.test.ts fails when an upgrade moves them (instead of falling back silently).
 */
function direct<T>(query: T): T {
  const q = query as unknown as DrizzlePrepared
  if (
    !q ||
    typeof q !== 'object' ||
    !(q.stmt instanceof Statement) ||
    !Array.isArray(q.query?.params) ||
    q.customResultMapper
  )
    return query
  const bind = compileParams(q.query.params)
  if (!bind) return query
  const stmt = q.stmt
  const overrides: Record<string, (values?: Record<string, unknown>) => unknown> = {
    run: (values = {}) => stmt.run(...(bind(values) as SQLQueryBindings[])),
    values: (values = {}) => stmt.values(...(bind(values) as SQLQueryBindings[])),
  }
  const nullable = Object.values(q.joinsNotNullableMap ?? {}).some((notNull) => !notNull)
  const mapRow = q.fields && !nullable ? compileRow(q.fields) : undefined
  if (mapRow) {
    overrides.get = (values = {}) => {
      const row = stmt.values(...(bind(values) as SQLQueryBindings[]))[0]
      return row === undefined ? undefined : mapRow(row as unknown[])
    }
    overrides.all = (values = {}) =>
      stmt.values(...(bind(values) as SQLQueryBindings[])).map((row) => mapRow(row as unknown[]))
  }
  return Object.assign(Object.create(q), overrides) as T
}

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

// ---- Writes: one at a time on the write connection

/** Take the write mutex: undefined when it was free (taken now), else a promise that resolves once it is ours. */
function lock(): Promise<void> | undefined {
  if (!own().locked) {
    own().locked = true
    return undefined
  }
  return new Promise<void>((resolve) => own().waiting.push(resolve))
}

/** Hand the mutex to the next waiter, in order, or free it. */
function unlock(): void {
  const next = own().waiting.shift()
  if (next) next()
  else own().locked = false
}

function settle<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return Promise.resolve(fn())
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * A store's writes: fn runs on the write connection, in the write transaction this context has open, else alone
 * behind the write mutex (each statement commits on its own, as it would outside a transaction). When the mutex is
 * free a synchronous fn runs at once, in the caller's synchronous step.
 */
export async function write<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  const backend = own().backend
  if (backend) return backend.write(fn)
  if (writeScope()) return settle(() => fn(opened().db))
  if (!own().locked) {
    own().locked = true
    return writeAlone(fn)
  }
  return new Promise<void>((resolve) => own().waiting.push(resolve)).then(() => writeAlone(fn))
}

function writeAlone<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  const scope = newWriteScope(false)
  const done = () => {
    endWrite(scope)
    unlock()
  }
  let value: T | Promise<T>
  try {
    const w = opened()
    value = scopes.run(scope, () => fn(w.db))
  } catch (error) {
    done()
    return Promise.reject(error)
  }
  if (value instanceof Promise) return value.finally(done)
  done()
  return Promise.resolve(value)
}

/**
 * Run fn in one IMMEDIATE transaction on the write connection, behind the write mutex; fn may await (the store
 * functions it calls run in the transaction: the async context says so). Inside an open transaction it runs in a
 * SAVEPOINT of it (undone alone if fn throws). Steps inside a transaction run one after another, never side by side.
 */
export async function transaction<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  const backend = own().backend
  if (backend) return backend.transaction(fn)
  const outer = writeScope()
  if (outer) return savepoint(outer, fn)
  await lock()
  const scope = newWriteScope(false)
  scope.held = []
  let value: T
  try {
    const w = opened()
    control(w, 'BEGIN IMMEDIATE').run()
    try {
      value = await scopes.run(scope, () => fn(w.db))
      const before = readyToCommit(scope)
      if (before !== undefined) await before
      control(w, 'COMMIT').run()
    } catch (error) {
      rollback(w)
      throw error
    }
  } finally {
    endWrite(scope)
    unlock()
  }
  const after = afterCommit(scope)
  if (after !== undefined) await after
  return value
}

function rollback(w: Conn): void {
  try {
    if (w.handle.inTransaction) control(w, 'ROLLBACK').run()
  } catch {}
}

async function savepoint<T>(scope: WriteScope, fn: (tx: DB) => T | Promise<T>): Promise<T> {
  const w = opened()
  const name = `sp${++scope.depth}`
  const mark = heldMark(scope)
  control(w, `SAVEPOINT ${name}`).run()
  try {
    const value = await fn(w.db)
    control(w, `RELEASE ${name}`).run()
    return value
  } catch (error) {
    control(w, `ROLLBACK TO ${name}`).run()
    control(w, `RELEASE ${name}`).run()
    dropHeldSince(scope, mark)
    throw error
  } finally {
    scope.depth -= 1
  }
}

// ---- Group commit

/**
 * A store's writes deferred to the end of a group-commit batch: `flush` runs once inside the batch's transaction,
 * before its COMMIT (one UPDATE for what twenty writes of the batch would each have made), `discard` when the batch
 * is rolled back.
 */
export type BatchEnd = { flush: () => void | Promise<void>; discard: () => void }

/**
 * `independent`: fn reads nothing another write of its batch writes, and what it writes collides with them only
 * through a unique index. On PostgreSQL a batch of such writes runs them side by side, their statements pipelined on
 * the batch's connection (one round trip for all where each would take one); a collision fails the batch, which runs
 * again one write at a time, as any batch with a write that threw. On SQLite (statements in process) they run one
 * after another all the same.
 */
export type QueuedOptions = { independent?: boolean }

/** This service's deferred writes (db/pg/client.ts runs them too). */
export const batchEnds = (): BatchEnd[] => own().batchEnds

/** Register a store's deferred writes (its module's install(), once per service). */
export function atBatchEnd(end: BatchEnd): void {
  own().batchEnds.push(end)
}

/**
 * Run fn in a write transaction shared with the other writes queued in the same event-loop turn (group commit): one
 * BEGIN IMMEDIATE … COMMIT for all of them, behind the write mutex; they run one after another. One that throws is
 * undone alone (the batch runs again with a SAVEPOINT for each) and its promise rejects with its error. Every promise
 * settles after the COMMIT: a caller answers its client only once its write is committed. A transaction costs ~65 µs
 * here (locks, the WAL write), one more queued write ~10 µs. fn may run twice (so it only reads and writes the
 * database) and must not open a transaction of its own. Inside a write transaction fn runs in it.
 */
export async function queuedTransaction<T>(fn: (tx: DB) => T | Promise<T>, options?: QueuedOptions): Promise<T> {
  const backend = own().backend
  if (backend) return backend.queuedTransaction(fn, options)
  if (writeScope()) return settle(() => fn(opened().db))
  return new Promise<T>((resolve, reject) => {
    // Outside whatever context queued it first: the batch makes its own.
    if (own().queue.length === 0) setImmediate(() => scopes.exit(commitQueue))
    own().queue.push({ fn, resolve: resolve as (value: unknown) => void, reject })
  })
}

async function commitQueue(): Promise<void> {
  const batch = own().queue
  own().queue = []
  await lock()
  try {
    // Most batches succeed whole: first without a savepoint per write (two statements each). If any write throws,
    // the transaction is rolled back and the batch runs again with savepoints, so only that write fails (the writes
    // are database work only: running one again is safe, and nothing was answered yet).
    if (!(await runBatch(batch, false)) && batch.length > 1) await runBatch(batch, true)
  } catch (error) {
    for (const q of batch) q.reject(error)
  } finally {
    unlock()
  }
}

/** One transaction for the batch; false when a write threw without savepoints (all rolled back, nothing settled). */
async function runBatch(batch: Queued[], savepoints: boolean): Promise<boolean> {
  const w = opened()
  const scope = newWriteScope(true)
  scope.held = []
  const results: { ok: boolean; value: unknown }[] = []
  try {
    control(w, 'BEGIN IMMEDIATE').run()
    await scopes.run(scope, async () => {
      for (const q of batch) {
        if (!savepoints) {
          results.push({ ok: true, value: await q.fn(w.db) })
          continue
        }
        const mark = heldMark(scope)
        control(w, 'SAVEPOINT queued').run()
        try {
          results.push({ ok: true, value: await q.fn(w.db) })
          control(w, 'RELEASE queued').run()
        } catch (error) {
          control(w, 'ROLLBACK TO queued').run()
          control(w, 'RELEASE queued').run()
          dropHeldSince(scope, mark)
          results.push({ ok: false, value: error })
        }
      }
      scope.batch = false
      for (const end of batchEnds()) await end.flush()
      const before = readyToCommit(scope)
      if (before !== undefined) await before
    })
    control(w, 'COMMIT').run()
  } catch (error) {
    scope.batch = false
    for (const end of batchEnds()) end.discard()
    rollback(w)
    endWrite(scope)
    // A write that threw outside a savepoint: try again with them (a lone write has its answer: the error).
    if (!savepoints && batch.length > 1 && results.length < batch.length) return false
    for (const q of batch) q.reject(error)
    return true
  }
  endWrite(scope)
  const after = afterCommit(scope)
  if (after !== undefined) await after
  batch.forEach((q, i) => (results[i].ok ? q.resolve(results[i].value) : q.reject(results[i].value)))
  return true
}

/** SQLite's data_version of the write connection: it changes when another connection (the CLI, another process)
 * commits to this database (the read connections would count this process's own commits too). */
export function dataVersion(): number {
  const backend = own().backend
  if (backend) return backend.dataVersion()
  return (control(opened(), 'PRAGMA data_version').get() as { data_version: number }).data_version
}
