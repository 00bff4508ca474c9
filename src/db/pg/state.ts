// What an App holds of its PostgreSQL database (AppState.postgres), and the connection a statement of this context
// runs on: its transaction's, else the App's pool.
import type { PgDialect } from 'drizzle-orm/pg-core'
import { PgDatabase } from 'drizzle-orm/pg-core'
import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import { PostgresJsSession } from 'drizzle-orm/postgres-js/session'
import type { Sql } from 'postgres'
import { appState } from '../../core/app'
import { writeScope } from '../client'
import type { Queued } from './group-commit'

export type Pg = PostgresJsDatabase

/** What an App holds of its PostgreSQL database. */
const newPostgres = () => ({
  pool: undefined as Sql | undefined,
  poolDb: undefined as Pg | undefined,
  /** The connection that LISTENs on CHANGES_CHANNEL, and the NOTIFYs it got (dataVersion). */
  listener: undefined as Sql | undefined,
  changesSeen: 0,
  /**
   * Transactions under way (group-commit batches too), each settled once it rolled back, or committed and ran its
   * after-commit work.
   */
  underWay: new Set<Promise<void>>(),
  /** Writes waiting for the next group-commit batch. */
  queue: [] as Queued[],
  /** A batch is being committed: what is queued meanwhile waits for it and goes in the next one. */
  committing: false,
})
declare module '../../core/app' {
  interface AppState {
    postgres: ReturnType<typeof newPostgres>
  }
}
export const pg = appState('postgres', newPostgres)

export function open(): { sql: Sql; db: Pg } {
  const { pool, poolDb } = pg()
  if (!pool || !poolDb) throw new Error('database is not open')
  return { sql: pool, db: poolDb }
}

/** The connection of this context: its transaction's, else the pool. */
export function current(): { db: Pg; client: Sql } {
  const server = writeScope()?.server
  if (server) return server as unknown as { db: Pg; client: Sql }
  const { sql: client, db } = open()
  return { db, client }
}

/** A Drizzle database on one transaction's connection: the pool's dialect, a session on that client. */
export function on(client: Sql): Pg {
  const dialect = (open().db as unknown as { dialect: PgDialect }).dialect
  return new PgDatabase(dialect, new PostgresJsSession(client, dialect, undefined, {}), undefined) as Pg
}
