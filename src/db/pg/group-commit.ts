// Group commit on PostgreSQL: the writes queued while no batch of the App runs share one transaction, pipelined when
// they are independent, with a savepoint each when one throws.
import type { Sql } from 'postgres'
import {
  batchEnds,
  type DB,
  dropHeldSince,
  heldMark,
  newWriteScope,
  type QueuedOptions,
  scopes,
  type WriteScope,
  writeScope,
} from '../client'
import { current, pg } from './state'
import { inTransaction, sentSince } from './transactions'

export type Queued = {
  fn: (tx: DB) => unknown
  independent: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Group commit: the writes queued while no batch runs (one event-loop turn), or while one runs, share the next
 * transaction; one batch at a time per App, so a busy server makes batches of many writes (one BEGIN and COMMIT,
 * and one write of each lobby's idle deadline, for all of them) rather than many small transactions queueing on the
 * same rows' locks.
 */
export async function queuedTransaction<T>(fn: (tx: DB) => T | Promise<T>, options?: QueuedOptions): Promise<T> {
  if (writeScope()) return fn(current().db as unknown as DB)
  const st = pg()
  return new Promise<T>((resolve, reject) => {
    if (st.queue.length === 0 && !st.committing) setImmediate(() => scopes.exit(() => commitAll(st)))
    st.queue.push({
      fn,
      independent: options?.independent === true,
      resolve: resolve as (value: unknown) => void,
      reject,
    })
  })
}

async function commitAll(st: ReturnType<typeof pg>): Promise<void> {
  st.committing = true
  try {
    while (st.queue.length) await commitQueue(st)
  } finally {
    st.committing = false
  }
}

async function commitQueue(st: ReturnType<typeof pg>): Promise<void> {
  const batch = st.queue
  st.queue = []
  try {
    // As on SQLite: first without a savepoint per write; when one throws, the batch runs again with them.
    if (!(await runBatch(batch, false)) && batch.length > 1) await runBatch(batch, true)
  } catch (error) {
    for (const q of batch) q.reject(error)
  }
}

type Held = NonNullable<WriteScope['held']>

/**
 * A write of a pipelined batch: the batch's scope (its connection, the caches' bookkeeping), but what it holds for the
 * COMMIT kept apart: the writes run side by side and reach their dispatches in the order their answers come back, so
 * the batch takes each one's afterwards, in the writes' order (as one after another would have held them). So are the
 * statements it sent unawaited (sendWithCommit): a savepoint in it waits for its own only.
 */
function apart(scope: WriteScope): { scope: WriteScope; held: Held; sent: Promise<unknown>[] } {
  const held: Held = []
  const sent: Promise<unknown>[] = []
  const own = new Proxy(scope, {
    get: (target, key) => (key === 'held' ? held : key === 'sent' ? sent : Reflect.get(target, key)),
  })
  return { scope: own, held, sent }
}

async function runBatch(batch: Queued[], savepoints: boolean): Promise<boolean> {
  const scope = newWriteScope(true)
  let results: { ok: boolean; value: unknown }[] = []
  // Independent writes side by side: their statements go out without waiting for each other's answers.
  const together = !savepoints && batch.length > 1 && batch.every((q) => q.independent)
  scope.pipelined = together
  // The batch's after-commit work (its events' relay): its writes are answered once it is done, while the next batch
  // goes on at once (each write's answer waits for its own relay only, not the queue for a relay before it).
  let after: Promise<void> | undefined
  try {
    await inTransaction(
      scope,
      async (tx) => {
        results = []
        scope.batch = true
        const { client } = scope.server as { client: Sql }
        if (together) {
          const writes = batch.map(() => apart(scope))
          const settled = await Promise.allSettled(
            batch.map((q, i) => scopes.run(writes[i].scope, async () => q.fn(tx))),
          )
          const failed = settled.find((s) => s.status === 'rejected')
          if (failed) throw failed.reason // rolled back; the batch runs again one write at a time
          if (scope.unpipeline) throw new Error('a write asked for a savepoint') // the same
          for (const s of settled) results.push({ ok: true, value: (s as PromiseFulfilledResult<unknown>).value })
          // What each write holds for the COMMIT (its dispatches), in the writes' order; what each sent, for its answer.
          for (const w of writes) {
            scope.held?.push(...w.held)
            scope.sent?.push(...w.sent)
          }
        }
        for (const q of together ? [] : batch) {
          if (!savepoints) {
            results.push({ ok: true, value: await q.fn(tx) })
            continue
          }
          const mark = heldMark(scope)
          const sent = sentSince(scope)
          await client.unsafe('SAVEPOINT queued')
          try {
            const value = await q.fn(tx)
            await sent.answered()
            results.push({ ok: true, value })
            await client.unsafe('RELEASE queued')
          } catch (error) {
            sent.drop()
            await client.unsafe('ROLLBACK TO queued')
            await client.unsafe('RELEASE queued')
            dropHeldSince(scope, mark)
            results.push({ ok: false, value: error })
          }
        }
        scope.batch = false
        // The batch's deferred writes go out with its COMMIT (runOn), in the same round trip.
        for (const end of batchEnds()) {
          const flushed = Promise.resolve(end.flush())
          flushed.catch(() => {})
          scope.sent?.push(flushed)
        }
      },
      undefined,
      (work) => {
        after = work
      },
    )
  } catch (error) {
    scope.batch = false
    for (const end of batchEnds()) end.discard()
    // A write threw, or a statement one sent unawaited failed at the COMMIT: again, with a savepoint each.
    if (!savepoints && batch.length > 1) return false
    for (const q of batch) q.reject(error)
    return true
  }
  const answer = () =>
    batch.forEach((q, i) => (results[i].ok ? q.resolve(results[i].value) : q.reject(results[i].value)))
  if (after) after.then(answer, answer)
  else answer()
  return true
}
