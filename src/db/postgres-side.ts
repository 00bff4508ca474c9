import { DatabaseOpenError } from './client'

/**
 * The PostgreSQL side (db/pg/client.ts), loaded only when DATABASE_URL names a server (server.ts, cli.ts). Reached
 * through import() only: the binary (`bun build --splitting`) holds it, with the driver, in chunks of their own, read
 * and evaluated the first time this runs, never on SQLite (tests/db/pg-apart.test.ts). A file of its own: db/client.ts,
 * which db/pg/client.ts builds on, names nothing of it.
 */
export async function postgresSide(): Promise<typeof import('./pg/client')> {
  try {
    return await import('./pg/client')
  } catch (error) {
    throw new DatabaseOpenError(
      `cannot use DATABASE_URL: the PostgreSQL side failed to load: ${String((error as Error)?.message ?? error).split('\n')[0]}`,
    )
  }
}
