// One SQLite file through bun:sqlite, wrapped by Drizzle. Opened once by main.ts (or the test harness).
import { Database, Statement, type SQLQueryBindings } from 'bun:sqlite'
import { mkdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { Column, is, noopDecoder, Param, Placeholder, sql, SQL, Subquery } from 'drizzle-orm'
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { log } from '../core/log'
import { applyMigrations, SchemaTooNewError } from './migrate'

export type DB = BunSQLiteDatabase

const onOpen: (() => void)[] = []
/** Run when a database is opened (caches that belong to one database clear themselves). */
export function whenOpened(fn: () => void): void {
  onOpen.push(fn)
}

let sqlite: Database | undefined
let current: DB | undefined

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

export function openDatabase(path: string, { syncFull = false } = {}): DB {
  const handle = openSqlite(path, { syncFull })
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
  const db = drizzle({ client: handle, casing: 'snake_case' })
  onOpen.forEach((fn) => fn())
  sqlite = handle
  current = db
  return db
}

/** Refresh the planner's statistics where they are stale (housekeeping runs it every 10 minutes). */
export function optimizeDatabase(): void {
  sqlite?.exec('PRAGMA optimize')
}

/** Bytes the database takes on disk: the file and its write-ahead log. */
export function databaseSize(path: string): number {
  let total = 0
  for (const file of [path, `${path}-wal`]) {
    try {
      total += statSync(file).size
    } catch {}
  }
  return total
}

/** The open database; throws if main.ts or the test harness did not open one. */
export function db(): DB {
  if (!current) throw new Error('database is not open')
  return current
}

export function rawDatabase(): Database {
  if (!sqlite) throw new Error('database is not open')
  return sqlite
}

export function closeDatabase(): void {
  try {
    sqlite?.exec('PRAGMA optimize')
  } catch {}
  sqlite?.close()
  sqlite = undefined
  current = undefined
}

/**
 * A prepared statement (a Drizzle one, or bun:sqlite's own) built on first use for the open database, rebuilt if the
 * database is reopened.
 * Hot paths use it: prepared statements roughly double throughput on bun:sqlite. The statement runs through
 * `direct()` below.
 */
export function prepared<T>(build: (db: DB) => T): () => T {
  let forDb: DB | undefined
  let statement: T
  return () => {
    const d = db()
    if (forDb !== d) {
      statement = direct(build(d))
      forDb = d
    }
    return statement
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
 * any shape it does not cover (custom mappers, left joins, deeper nesting) keeps Drizzle's own methods.
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
export const idsTable = (name = 'ids') => sql`json_each(${sql.placeholder(name)}) as ids`
export const idValue = sql`ids.value`

const snapshotStatements = prepared(() => ({
  begin: rawDatabase().prepare('BEGIN DEFERRED'),
  commit: rawDatabase().prepare('COMMIT'),
}))

/**
 * Run fn's reads in one read transaction (BEGIN DEFERRED ... COMMIT): they see one snapshot, and the WAL read lock is
 * taken once instead of once per statement (outside a transaction every statement takes and drops its own, a few
 * microseconds of locking each). For the several reads of one request; fn is synchronous and only reads. Inside an
 * open transaction it just runs fn.
 */
export function reading<T>(fn: () => T): T {
  const handle = sqlite
  if (!handle || handle.inTransaction) return fn()
  const { begin, commit } = snapshotStatements()
  begin.run()
  inSnapshot = true
  try {
    return fn()
  } finally {
    inSnapshot = false
    // Nothing was written: COMMIT ends the read transaction whether fn returned or threw.
    if (handle.inTransaction) commit.run()
  }
}

let inSnapshot = false

/** A transaction that may write is open: what is read now may still be rolled back (db/cache.ts keeps none of it). */
export function inWriteTransaction(): boolean {
  return sqlite !== undefined && sqlite.inTransaction && !inSnapshot
}

/** Run fn in one IMMEDIATE transaction (synchronous: bun:sqlite transactions cannot span an await). */
export function transaction<T>(fn: (tx: DB) => T): T {
  return db().transaction((tx) => fn(tx as unknown as DB), { behavior: 'immediate' })
}

// ---- Group commit

type Queued = { fn: (tx: DB) => unknown; resolve: (value: unknown) => void; reject: (error: unknown) => void }
let queue: Queued[] = []

/**
 * A store's writes deferred to the end of a group-commit batch: `flush` runs once inside the batch's transaction,
 * before its COMMIT (one UPDATE for what twenty writes of the batch would each have made), `discard` when the batch
 * is rolled back.
 */
export type BatchEnd = { flush: () => void; discard: () => void }
const batchEnds: BatchEnd[] = []
let inBatch = false

/** Register a store's deferred writes (at module load). */
export function atBatchEnd(end: BatchEnd): void {
  batchEnds.push(end)
}

/** A queued write is running: a store may defer its write to the batch's end (atBatchEnd). */
export const inQueuedBatch = (): boolean => inBatch

const groupStatements = prepared(() => {
  const raw = rawDatabase()
  return {
    begin: raw.prepare('BEGIN IMMEDIATE'),
    commit: raw.prepare('COMMIT'),
    rollback: raw.prepare('ROLLBACK'),
    savepoint: raw.prepare('SAVEPOINT queued'),
    release: raw.prepare('RELEASE queued'),
    undo: raw.prepare('ROLLBACK TO queued'),
  }
})

/**
 * Run fn in a write transaction shared with the other writes queued in the same event-loop turn (group commit): one
 * BEGIN IMMEDIATE … COMMIT for all of them; one that throws is undone alone (the batch runs again with a SAVEPOINT
 * for each) and its promise rejects with its error. Every promise settles after the COMMIT: a caller answers its
 * client only once its write is committed. A transaction costs ~65 µs here (locks, the WAL write), one more queued
 * write ~10 µs. fn is synchronous, may run twice (so it only reads and writes the database), and must not open a
 * transaction of its own.
 */
export function queuedTransaction<T>(fn: (tx: DB) => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (queue.length === 0) setImmediate(commitQueue)
    queue.push({ fn, resolve: resolve as (value: unknown) => void, reject })
  })
}

function commitQueue(): void {
  const batch = queue
  queue = []
  let s: ReturnType<typeof groupStatements>
  try {
    s = groupStatements()
  } catch (error) {
    for (const q of batch) q.reject(error)
    return
  }
  // Most batches succeed whole: first without a savepoint per write (two statements each). If any write throws, the
  // transaction is rolled back and the batch runs again with savepoints, so only that write fails (the writes are
  // synchronous database work: running one again is safe, and nothing was answered yet).
  if (!runBatch(batch, s, false) && batch.length > 1) runBatch(batch, s, true)
}

/** One transaction for the batch; false when a write threw without savepoints (all rolled back, nothing settled). */
function runBatch(batch: Queued[], s: ReturnType<typeof groupStatements>, savepoints: boolean): boolean {
  const results: { ok: boolean; value: unknown }[] = []
  try {
    s.begin.run()
    inBatch = true
    for (const q of batch) {
      if (!savepoints) {
        results.push({ ok: true, value: q.fn(current!) })
        continue
      }
      s.savepoint.run()
      try {
        results.push({ ok: true, value: q.fn(current!) })
        s.release.run()
      } catch (error) {
        s.undo.run()
        s.release.run()
        results.push({ ok: false, value: error })
      }
    }
    inBatch = false
    for (const end of batchEnds) end.flush()
    s.commit.run()
  } catch (error) {
    inBatch = false
    for (const end of batchEnds) end.discard()
    try {
      if (sqlite?.inTransaction) s.rollback.run()
    } catch {}
    // A write that threw outside a savepoint: try again with them (a lone write has its answer: the error).
    if (!savepoints && batch.length > 1 && results.length < batch.length) return false
    for (const q of batch) q.reject(error)
    return true
  }
  batch.forEach((q, i) => (results[i].ok ? q.resolve(results[i].value) : q.reject(results[i].value)))
  return true
}

const dataVersionStatement = prepared(() => rawDatabase().prepare<{ data_version: number }, []>('PRAGMA data_version'))

/** SQLite's data_version: it changes when another connection (the CLI, another process) commits to this database. */
export function dataVersion(): number {
  return dataVersionStatement().get()!.data_version
}
