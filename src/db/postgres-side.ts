import { DatabaseOpenError } from './client'

/**
 * The PostgreSQL side (db/pg/client.ts), loaded only when DATABASE_URL names a server (server.ts, cli.ts). The
 * specifier is not a literal, so the bundle and the compiled binary hold nothing of it (tests/db/pg-apart.test.ts):
 * PostgreSQL runs from the source tree (`bun src/main.ts`), where it resolves. A file of its own: db/client.ts, which
 * db/pg/client.ts builds on, names nothing of it.
 */
export async function postgresSide(): Promise<typeof import('./pg/client')> {
  const path = './pg/client.ts'
  try {
    return await import(path)
  } catch (error) {
    throw new DatabaseOpenError(
      `cannot use DATABASE_URL: this build holds no PostgreSQL side (run the server from its source: bun src/main.ts): ${String((error as Error)?.message ?? error).split('\n')[0]}`,
    )
  }
}
