// Transactions on PostgreSQL: each on a connection of its own taken from the App's pool for its length, its BEGIN,
// its statements sent unawaited and its COMMIT going out together; a SAVEPOINT inside another; serialization
// failures and deadlocks run again. Group commit (group-commit.ts) runs its batches through them.
import type { ReservedSql, Sql } from 'postgres'
import {
  afterCommit,
  type BehindResults,
  readyToCommit,
  type DB,
  dropHeldSince,
  endWrite,
  heldMark,
  newWriteScope,
  scopes,
  startBehind,
  type WriteScope,
  writeScope,
} from '../client'
import { current, on, open, pg } from './state'

/** How many times a transaction that lost a serialization race or a deadlock runs again. */
const RETRIES = 5

const RETRYABLE = new Set(['40001', '40P01'])

/** Run a whole transaction again when PostgreSQL chose it as the loser of a race (bounded, with jitter). */
async function retrying<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run()
    } catch (error) {
      const code = (error as { code?: string })?.code
      if (attempt > RETRIES || !code || !RETRYABLE.has(code)) throw error
      await Bun.sleep(Math.random() * 5 * attempt)
    }
  }
}

/** Once every transaction of this App under way now has ended, its after-commit work (events, session calls) done. */
export function settled(): Promise<void> {
  const { underWay } = pg()
  return underWay.size ? Promise.all([...underWay]).then(() => undefined) : Promise.resolve()
}

/**
 * A transaction (runTransaction), counted in `underWay` until it has ended. With `detach`, it resolves at its COMMIT
 * and hands its after-commit work (if any) to `detach` instead of waiting for it (a group-commit batch: the next one
 * need not wait for this one's relay); it stays counted until that work is done.
 */
export async function inTransaction<T>(
  scope: WriteScope,
  fn: (tx: DB) => T | Promise<T>,
  reserved?: Reserved,
  detach?: (after: Promise<void>) => void,
): Promise<T> {
  const { promise, resolve } = Promise.withResolvers<void>()
  const { underWay } = pg()
  underWay.add(promise)
  let after: Promise<void> | undefined
  try {
    return await runTransaction(scope, fn, reserved, detach && ((work) => (after = work)))
  } finally {
    const ended = () => {
      underWay.delete(promise)
      resolve()
    }
    if (after === undefined) ended()
    else {
      after.then(ended, ended)
      detach?.(after)
    }
  }
}

/** A connection a transaction reserved; given back once the transaction run behind its COMMIT (behindOn) ended. */
type Reserved = { client: ReservedSql; behind?: Promise<unknown> }

function release(conn: Reserved): void {
  if (conn.behind === undefined) return conn.client.release()
  const back = () => conn.client.release()
  conn.behind.then(back, back)
}

/**
 * fn in one transaction on a connection of its own (`reserved`: that one, and no run again), in `scope`; the scope ends
 * after COMMIT or ROLLBACK. Serialization failures and deadlocks run it again on a new connection.
 */
async function runTransaction<T>(
  scope: WriteScope,
  fn: (tx: DB) => T | Promise<T>,
  reserved?: Reserved,
  detach?: (after: Promise<void>) => void,
): Promise<T> {
  let value: T
  let behind: BehindResults | undefined
  const attempt = async (conn: Reserved) => {
    const done = await runOn(conn, scope, fn)
    behind = done.behind
    return done.value
  }
  try {
    value = reserved
      ? await attempt(reserved)
      : await retrying(async () => {
          const conn: Reserved = { client: await open().sql.reserve() }
          try {
            return await attempt(conn)
          } finally {
            release(conn)
          }
        })
  } finally {
    endWrite(scope)
  }
  const after = afterCommit(scope, behind)
  if (after !== undefined) {
    if (detach) detach(after)
    else await after
  }
  return value
}

/**
 * One try of a transaction on `conn`. BEGIN is not awaited: it goes out with the transaction's first statements
 * (postgres-js sends a connection's queries in order without waiting for the answers), one round trip less. Nor is
 * what follows fn: the statements it sent without awaiting (scope.sent), its holders' (readyToCommit: the Gateway's
 * outbox rows), the COMMIT, and right behind it the first holder's own transaction (startBehind: the outbox's relay)
 * go out together: one round trip where each took one.
 */
async function runOn<T>(
  conn: Reserved,
  scope: WriteScope,
  fn: (tx: DB) => T | Promise<T>,
): Promise<{ value: T; behind: BehindResults | undefined }> {
  const { client } = conn
  const begun = client.unsafe('BEGIN')
  begun.catch(() => {}) // a failed BEGIN fails the statements after it
  const tx = { db: on(client) as unknown as DB, client, transaction: true }
  scope.server = tx
  scope.depth = 0
  scope.held = [] // a run again holds only what it gives again
  const sent: Promise<unknown>[] = []
  scope.sent = sent
  let value: T
  let before: Promise<void> | undefined
  try {
    value = await scopes.run(scope, () => fn(tx.db))
    before = readyToCommit(scope)
  } catch (error) {
    await client.unsafe('ROLLBACK').catch(() => {})
    throw error
  }
  before?.catch(() => {})
  // postgres-js hands a statement to its connection a few microtasks after the call (Drizzle's async layers, then a
  // thenable's job), and a COMMIT must not overtake one: it waits for this turn's microtasks to have run.
  if (sent.length > 0 || before !== undefined) await new Promise<void>((resolve) => setImmediate(resolve))
  const committed = client.unsafe('COMMIT')
  committed.catch(() => {})
  const behind = startBehind(scope, (fn) => behindOn(conn, fn), transaction)
  try {
    await begun
    await Promise.all([...sent, before])
  } catch (error) {
    // The transaction is aborted: PostgreSQL answers the COMMIT with ROLLBACK.
    await committed.catch(() => {})
    throw error
  }
  // A statement that failed (and was caught) aborted the transaction: PostgreSQL answers COMMIT with ROLLBACK.
  if ((await committed).command !== 'COMMIT') throw abortedTransaction()
  return { value, behind }
}

/**
 * A holder's transaction right behind a COMMIT, on the committing connection (its statements sent before the COMMIT
 * is answered); one per connection, any other runs as a transaction of its own. Not run again: a holder's behind is
 * work that a later relay or sweep does as well.
 */
function behindOn<R>(conn: Reserved, fn: (tx: DB) => Promise<R>): Promise<R> {
  if (conn.behind !== undefined) return transaction(fn)
  const done = inTransaction(newWriteScope(false), fn, conn)
  conn.behind = done
  return done
}

/**
 * What a savepoint sends unawaited (sendWithCommit) from now on: answered before it ends (one that failed fails it,
 * with its own error), dropped when it rolls back (their answers no longer matter).
 */
export function sentSince(scope: WriteScope): { answered(): Promise<unknown>; drop(): void } {
  const sent = scope.sent ?? []
  const mark = sent.length
  return {
    answered: () => Promise.all(sent.splice(mark)),
    drop: () => {
      sent.length = Math.min(sent.length, mark)
    },
  }
}

const abortedTransaction = () =>
  Object.assign(new Error('the transaction was rolled back: a statement in it failed'), { code: '25P02' })

async function savepoint<T>(scope: WriteScope, fn: (tx: DB) => T | Promise<T>): Promise<T> {
  if (scope.pipelined) {
    // Its ROLLBACK TO would undo what the batch's other writes sent meanwhile: the batch runs again, one at a time
    // (even if this write catches the error).
    scope.unpipeline = true
    throw new Error('a savepoint in a write of a pipelined batch: the batch runs again one write at a time')
  }
  const { client, db } = scope.server as { client: Sql; db: DB }
  const name = `sp${++scope.depth}`
  const mark = heldMark(scope)
  const sent = sentSince(scope)
  await client.unsafe(`SAVEPOINT ${name}`)
  try {
    const value = await fn(db)
    await sent.answered()
    await client.unsafe(`RELEASE ${name}`)
    return value
  } catch (error) {
    sent.drop()
    await client.unsafe(`ROLLBACK TO ${name}`)
    await client.unsafe(`RELEASE ${name}`)
    dropHeldSince(scope, mark)
    throw error
  } finally {
    scope.depth -= 1
  }
}

export async function transaction<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  // Inside a transaction: a savepoint of it. Inside a write outside any (its statements on the pool): one of its own.
  const outer = writeScope()
  if (outer?.server?.transaction) return savepoint(outer, fn)
  return inTransaction(newWriteScope(false), fn)
}

/**
 * A write outside a transaction: its statements run on the pool, each committing on its own (as on SQLite), in a
 * write scope of its own (the caches' rules). Inside a transaction it runs in it.
 */
export async function write<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  if (writeScope()) return fn(current().db as unknown as DB)
  const scope = newWriteScope(false)
  const { sql: client, db } = open()
  scope.server = { db: db as unknown as DB, client, transaction: false }
  try {
    return await scopes.run(scope, () => fn(db as unknown as DB))
  } finally {
    endWrite(scope)
  }
}
