// Server-held keys: 32 random bytes per name, generated on first use and kept in the database.
import { eq } from 'drizzle-orm'
import { randomBytes } from 'node:crypto'
import { dialectTables, whenOpened, write } from './client'
import * as sqliteTables from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables, () => import('./tables.pg'))

const cache = new Map<string, Buffer>()

export async function getSecret(name: string): Promise<Buffer> {
  const cached = cache.get(name)
  if (cached) return cached
  const row = await write(async (w) => {
    await w
      .insert(t.serverSecrets)
      .values({ name, value: randomBytes(32).toString('base64') })
      .onConflictDoNothing()
      .run()
    return w.select().from(t.serverSecrets).where(eq(t.serverSecrets.name, name)).get()!
  })
  const key = Buffer.from(row.value, 'base64')
  cache.set(name, key)
  return key
}

whenOpened(() => cache.clear())
