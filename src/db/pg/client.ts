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
// The pool, its listener, the group-commit queue and the transactions under way are the App's (AppState.postgres,
// state.ts): two services of one process on two databases share none of them, and each closes its own.
// Its parts: state.ts (what an App holds, the connection of a context), transactions.ts, group-commit.ts.
import { type Column, eq, sql, type Table } from 'drizzle-orm'
import { PgDeleteBase, PgInsertBase, PgSelectBase, PgTable, PgUpdateBase } from 'drizzle-orm/pg-core'
import { PostgresJsPreparedQuery } from 'drizzle-orm/postgres-js/session'
import { drizzle } from 'drizzle-orm/postgres-js'
import postgres, { type Sql } from 'postgres'
import { Errors } from '../../core/errors'
import { log } from '../../core/log'
import { type Backend, type DB, DatabaseOpenError, useBackend } from '../client'
import { useTables } from '../dialect-tables'
import { SchemaTooNewError } from '../migrate'
import { applyPgMigrations } from './migrate'
import { queuedTransaction } from './group-commit'
import { current, open, type Pg, pg } from './state'
import { settled, transaction, write } from './transactions'
import { twinOf } from './twins'

/** Where the CLI tells running servers that it committed (their caches start over). */
export const CHANGES_CHANNEL = 'lobby_server_changes'
/** Connections of the pool. */
const POOL_SIZE = 16

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

// ---- Prepared statements (the connection of a context: state.ts)

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

// ---- Open and close

/** How many Apps of this process have a pool open: the stores' tables go back to SQLite's when none has. */
let poolsOpen = 0

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
  const st = pg()
  if (st.pool) await close()
  st.pool = client
  st.poolDb = drizzle({ client, casing: 'snake_case' })
  poolsOpen += 1
  if (listen) {
    const listener = postgres(url, { max: 1, onnotice: () => {} })
    st.listener = listener
    await listener.listen(CHANGES_CHANNEL, () => {
      st.changesSeen += 1
    })
  }
  useTables(twinOf)
  useBackend(backend)
}

/** Tell the servers running on this database that this process committed (the CLI, after its writes). */
export async function announceChanges(): Promise<void> {
  await open().sql.notify(CHANGES_CHANNEL, '')
}

/** Close this App's pool and listener; the other Apps' go on. */
async function close(): Promise<void> {
  const st = pg()
  const [p, l] = [st.pool, st.listener]
  if (!p) return
  st.pool = st.poolDb = st.listener = undefined
  poolsOpen -= 1
  if (poolsOpen === 0) useTables(undefined)
  await Promise.all([p.end({ timeout: 5 }), l?.end({ timeout: 1 })])
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
  dataVersion: () => pg().changesSeen,
  close,
}
