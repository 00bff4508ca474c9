// Server-held keys: 32 random bytes per name, generated on first use and kept in the database.
import { eq } from 'drizzle-orm'
import { randomBytes } from 'node:crypto'
import { appState } from '../core/app'
import { databaseEpoch, write } from './client'
import { dialectTables } from './dialect-tables'
import * as sqliteTables from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

/** This service's keys, of the database opening `epoch`. */
const newSecrets = () => ({ epoch: -1, keys: new Map<string, Buffer>() })
declare module '../core/app' {
  interface AppState {
    secrets: ReturnType<typeof newSecrets>
  }
}
const kept = appState('secrets', newSecrets)

export async function getSecret(name: string): Promise<Buffer> {
  const held = kept()
  if (held.epoch !== databaseEpoch()) {
    held.keys.clear()
    held.epoch = databaseEpoch()
  }
  const cached = held.keys.get(name)
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
  if (held.epoch === databaseEpoch()) held.keys.set(name, key)
  return key
}
