// The stores on PostgreSQL (DATABASE_URL=postgres://…): the functions of db/client.ts on a postgres-js pool through
// drizzle-orm/postgres-js. Loaded with import() by server.ts and cli.ts only when DATABASE_URL names a server.
//
// What changes against SQLite (docs/DESIGN.md, "Stores on PostgreSQL"):
// - no write mutex: transactions run side by side, each on a connection of its own taken from the pool for its
//   length (postgres-js `begin`), in the same async-context scope as on SQLite (the caches read it); a transaction
//   inside a transaction is a SAVEPOINT. Serialization failures and deadlocks (40001, 40P01) run it again, a few
//   times, after a short random wait;
// - group commit: the writes queued in one event-loop turn share one transaction (savepoints when one throws);
// - a write outside a transaction is one statement on the pool (it commits on its own); `reading()` just runs fn
//   (each statement sees what is committed);
// - every store's tables are swapped for their PostgreSQL twins (db/pg/twins.ts, built from the same declarations),
//   and Drizzle's PostgreSQL builders answer SQLite's terminal calls (`get`, `all`, `run`) with promises, so the store
//   bodies stay as they are;
// - another process's commits (the CLI): it sends NOTIFY on CHANGES_CHANNEL after its writes; the server LISTENs
//   and counts them, as SQLite's data_version counts them (db/cache.ts empties its caches when it moves).
import { type Column, eq, sql, type Table } from 'drizzle-orm'
import {
  PgDatabase,
  PgDeleteBase,
  type PgDialect,
  PgInsertBase,
  PgSelectBase,
  PgTable,
  PgUpdateBase,
} from 'drizzle-orm/pg-core'
import { PostgresJsPreparedQuery, PostgresJsSession } from 'drizzle-orm/postgres-js/session'
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import postgres, { type ReservedSql, type Sql } from 'postgres'
import { Errors } from '../../core/errors'
import { log } from '../../core/log'
import {
  afterCommit,
  type Backend,
  type BehindResults,
  batchEnds,
  readyToCommit,
  type DB,
  DatabaseOpenError,
  dropHeldSince,
  endWrite,
  heldMark,
  newWriteScope,
  type QueuedOptions,
  scopes,
  startBehind,
  useBackend,
  type WriteScope,
  writeScope,
} from '../client'
import { useTables } from '../dialect-tables'
import { SchemaTooNewError } from '../migrate'
import { applyPgMigrations } from './migrate'
import { twinOf } from './twins'

/** Where the CLI tells running servers that it committed (their caches start over). */
export const CHANGES_CHANNEL = 'lobby_server_changes'
/** Connections of the pool. */
const POOL_SIZE = 16
/** How many times a transaction that lost a serialization race or a deadlock runs again. */
const RETRIES = 5

/** A postgres://… or postgresql://… URL: the stores run on PostgreSQL. */
export const isPostgresUrl = (url: string | undefined): url is string => !!url && /^postgres(ql)?:\/\//i.test(url)

// ---- SQLite's terminal calls on Drizzle's PostgreSQL builders

type Executable = { execute(values?: Record<string, unknown>): Promise<unknown> }
const first = (rows: unknown) => (rows as unknown[])[0]

/**
 * PostgreSQL's text holds no NUL character (SQLite's does), and a parameter holding one fails its statement (SQLSTATE
 * 22021), which aborts the transaction it runs in. So such a statement is never sent: no stored row can hold a NUL, so
 * a read finds nothing (as on SQLite, where none was ever stored: http/body.ts refuses it in a request body), and a
 * write is refused as bad input (400 50035), before anything reached the connection. Every statement passes here
 * (builders, prepared statements, `execute(sql…)`).
 */
const holdsNul = (value: unknown): boolean =>
  typeof value === 'string' ? value.includes('\0') : Array.isArray(value) && value.some(holdsNul)
type DrizzleQuery = { params: unknown[]; queryString: string }
const execute = PostgresJsPreparedQuery.prototype.execute
PostgresJsPreparedQuery.prototype.execute = function (this: DrizzleQuery, values?: Record<string, unknown>) {
  if (!this.params.some(holdsNul) && !(values && Object.values(values).some(holdsNul)))
    return execute.call(this as never, values)
  if (/^\s*select\b/i.test(this.queryString)) return Promise.resolve([])
  return Promise.reject(Errors.invalidFormBody())
} as typeof execute
/** What SQLite's run() answers, as far as a store reads it. */
const changes = (result: unknown) => ({ changes: (result as { count?: number }).count ?? (result as unknown[]).length })

for (const builder of [PgSelectBase, PgInsertBase, PgUpdateBase, PgDeleteBase]) {
  Object.defineProperties(builder.prototype, {
    all: {
      value: function (this: Executable) {
        return this.execute()
      },
    },
    get: {
      value: function (this: Executable) {
        return this.execute().then(first)
      },
    },
    run: {
      value: function (this: Executable) {
        return this.execute().then(changes)
      },
    },
  })
}

// ---- The pool, the scopes' connections

type Pg = PostgresJsDatabase
let pool: Sql | undefined
let poolDb: Pg | undefined
let listener: Sql | undefined
let changesSeen = 0

function open(): { sql: Sql; db: Pg } {
  if (!pool || !poolDb) throw new Error('database is not open')
  return { sql: pool, db: poolDb }
}

/** The connection of this context: its transaction's, else the pool. */
function current(): { db: Pg; client: Sql } {
  const server = writeScope()?.server
  if (server) return server as unknown as { db: Pg; client: Sql }
  const { sql: client, db } = open()
  return { db, client }
}

/** A Drizzle database on one transaction's connection: the pool's dialect, a session on that client. */
function on(client: Sql): Pg {
  const dialect = (open().db as unknown as { dialect: PgDialect }).dialect
  return new PgDatabase(dialect, new PostgresJsSession(client, dialect, undefined, {}), undefined) as Pg
}

/** A prepared query of postgres-js: the statement text and its parameters, run on whichever client it is given. */
type PgPrepared = Executable & { client: Sql; prepare: boolean; queryString: string }

function prepared<T>(build: (db: DB) => T): () => T {
  let query: PgPrepared | undefined
  let calls: T | undefined
  return () => {
    if (!calls) {
      query = build(open().db as unknown as DB) as unknown as PgPrepared
      query.prepare = true // a named statement, parsed once per connection
      const q = query
      const run = (values?: Record<string, unknown>) => {
        const client = current().client
        const on = client === q.client ? q : (Object.create(q, { client: { value: client } }) as PgPrepared)
        return on.execute(values)
      }
      calls = {
        all: run,
        get: (values?: Record<string, unknown>) => run(values).then(first),
        run: (values?: Record<string, unknown>) => run(values).then(changes),
      } as T
    }
    return calls
  }
}

// ---- Transactions

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

/**
 * Transactions under way in this process (group-commit batches too), each settled once it rolled back, or committed
 * and ran its after-commit work.
 */
const underWay = new Set<Promise<void>>()

/** Once every transaction under way now has ended, its after-commit work (events, session calls) done. */
function settled(): Promise<void> {
  return underWay.size ? Promise.all([...underWay]).then(() => undefined) : Promise.resolve()
}

/**
 * A transaction (runTransaction), counted in `underWay` until it has ended. With `detach`, it resolves at its COMMIT
 * and hands its after-commit work (if any) to `detach` instead of waiting for it (a group-commit batch: the next one
 * need not wait for this one's relay); it stays counted until that work is done.
 */
async function inTransaction<T>(
  scope: WriteScope,
  fn: (tx: DB) => T | Promise<T>,
  reserved?: Reserved,
  detach?: (after: Promise<void>) => void,
): Promise<T> {
  const { promise, resolve } = Promise.withResolvers<void>()
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
  const behind = startBehind(scope, (fn) => behindOn(conn, fn))
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
function sentSince(scope: WriteScope): { answered(): Promise<unknown>; drop(): void } {
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

async function transaction<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
  // Inside a transaction: a savepoint of it. Inside a write outside any (its statements on the pool): one of its own.
  const outer = writeScope()
  if (outer?.server?.transaction) return savepoint(outer, fn)
  return inTransaction(newWriteScope(false), fn)
}

/**
 * A write outside a transaction: its statements run on the pool, each committing on its own (as on SQLite), in a
 * write scope of its own (the caches' rules). Inside a transaction it runs in it.
 */
async function write<T>(fn: (tx: DB) => T | Promise<T>): Promise<T> {
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

// ---- Group commit

type Queued = {
  fn: (tx: DB) => unknown
  independent: boolean
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}
let queue: Queued[] = []

/** A batch is being committed: what is queued meanwhile waits for it and goes in the next one. */
let committing = false

/**
 * Group commit: the writes queued while no batch runs (one event-loop turn), or while one runs, share the next
 * transaction; one batch at a time per process, so a busy server makes batches of many writes (one BEGIN and COMMIT,
 * and one write of each lobby's idle deadline, for all of them) rather than many small transactions queueing on the
 * same rows' locks.
 */
async function queuedTransaction<T>(fn: (tx: DB) => T | Promise<T>, options?: QueuedOptions): Promise<T> {
  if (writeScope()) return fn(current().db as unknown as DB)
  return new Promise<T>((resolve, reject) => {
    if (queue.length === 0 && !committing) setImmediate(() => scopes.exit(commitAll))
    queue.push({ fn, independent: options?.independent === true, resolve: resolve as (value: unknown) => void, reject })
  })
}

async function commitAll(): Promise<void> {
  committing = true
  try {
    while (queue.length) await commitQueue()
  } finally {
    committing = false
  }
}

async function commitQueue(): Promise<void> {
  const batch = queue
  queue = []
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

// ---- Open and close

async function lockRow(tx: DB, table: Table, column: Column, value: string): Promise<void> {
  await (tx as unknown as Pg)
    .select({ one: sql`1` })
    .from(table as PgTable)
    .where(eq(column, value))
    .for('update')
}

async function lockName(tx: DB, name: string): Promise<void> {
  await (tx as unknown as Pg).execute(sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`)
}

function reason(error: unknown): string {
  const e = error as { code?: string; message?: string }
  const message = String(e?.message ?? error).split('\n')[0]
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message
}

/** Where the URL points, without its password (for messages). */
const shown = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')

/** postgres-js reads bigint (count(*), ms timestamps) as text by default: here as JS numbers, as SQLite gives them. */
const numbers = { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } }

/**
 * Connect to the PostgreSQL server of `url`, apply the pending migrations (under their advisory lock), and run every
 * store on it from now on. Throws DatabaseOpenError with one line for the operator.
 */
export async function openPostgres(url: string, { listen = true } = {}): Promise<void> {
  const options = {
    max: POOL_SIZE,
    onnotice: () => {},
    types: numbers,
    connection: { application_name: 'lobby-server' },
    // No custom array types to learn: one query less on every new connection.
    fetch_types: false,
  }
  const client = postgres(url, options)
  try {
    const applied = await applyPgMigrations(client)
    for (const tag of applied) log.notice('migration applied', { migration: tag, database: shown(url) })
  } catch (error) {
    await client.end({ timeout: 1 })
    if (error instanceof SchemaTooNewError)
      throw new DatabaseOpenError(`cannot use database ${shown(url)}: ${error.message}`)
    throw new DatabaseOpenError(`cannot open database ${shown(url)}: ${reason(error)}`)
  }
  if (pool) await close()
  pool = client
  poolDb = drizzle({ client, casing: 'snake_case' })
  if (listen) {
    listener = postgres(url, { max: 1, onnotice: () => {} })
    await listener.listen(CHANGES_CHANNEL, () => {
      changesSeen += 1
    })
  }
  useTables(twinOf)
  useBackend(backend)
}

/** Tell the servers running on this database that this process committed (the CLI, after its writes). */
export async function announceChanges(): Promise<void> {
  await open().sql.notify(CHANGES_CHANNEL, '')
}

async function close(): Promise<void> {
  const [p, l] = [pool, listener]
  pool = poolDb = listener = undefined
  useTables(undefined)
  await Promise.all([p?.end({ timeout: 5 }), l?.end({ timeout: 1 })])
}

const backend: Backend = {
  db: () => current().db as unknown as DB,
  prepared,
  settled,
  write,
  transaction,
  queuedTransaction,
  lockRow,
  lockName,
  dataVersion: () => changesSeen,
  close,
}
