// Writes on SQLite: one at a time on the write connection behind the write mutex — a write alone, a transaction (a
// SAVEPOINT inside another), and group commit (the writes queued in one event-loop turn share one transaction).
import { afterCommit, dropHeldSince, heldMark, readyToCommit } from './commit-holders'
import { control, lock, opened, unlock } from './connections'
import { endWrite, newWriteScope, scopes, type WriteScope, writeScope } from './scope'
import { type Conn, type DB, own, type Queued } from './state'

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

/** Refresh the planner's statistics where they are stale (housekeeping runs it every 10 minutes). It may write. */
export async function optimizeDatabase(): Promise<void> {
  if (own().backend) return // PostgreSQL's autovacuum keeps its statistics
  return await write(() => {
    own().writer?.handle.exec('PRAGMA optimize')
  })
}
