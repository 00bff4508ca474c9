// Opening and closing the SQLite file on its connections (db/client.ts tells which connection a statement runs on),
// and the write mutex that a close waits for.
import { Database, type Statement } from 'bun:sqlite'
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { log } from '../core/log'
import { applyMigrations, SchemaTooNewError } from './migrate'
import { type Conn, type DB, own } from './state'

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
export function openReader(path: string): Database {
  const handle = new Database(path, { create: false, strict: true })
  handle.exec('PRAGMA busy_timeout = 10000')
  handle.exec('PRAGMA query_only = 1')
  handle.exec('PRAGMA temp_store = MEMORY')
  return handle
}

export function connect(slot: number, handle: Database): Conn {
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
export function control(c: Conn, text: string): Statement {
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

export function closeConnections(): void {
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

export function opened(): Conn {
  const writer = own().writer
  if (!writer) throw new Error('database is not open')
  return writer
}

/** The write connection's bun:sqlite handle: tests that write around the stores, and the CLI's backup. */
export function rawDatabase(): Database {
  return opened().handle
}

// ---- The write mutex: one write at a time on the write connection

/** Take the write mutex: undefined when it was free (taken now), else a promise that resolves once it is ours. */
export function lock(): Promise<void> | undefined {
  if (!own().locked) {
    own().locked = true
    return undefined
  }
  return new Promise<void>((resolve) => own().waiting.push(resolve))
}

/** Hand the mutex to the next waiter, in order, or free it. */
export function unlock(): void {
  const next = own().waiting.shift()
  if (next) next()
  else own().locked = false
}
