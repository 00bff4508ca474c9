// Every query of the auth domain: the push tokens a session registers. (Users, sessions and the other account rows
// are queried through accounts/store.ts.)
import { and, eq } from 'drizzle-orm'
import { clock } from '../core/clock'
import { write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export type PushDevice = Pick<typeof t.pushDevices.$inferSelect, 'provider' | 'token' | 'voipProvider' | 'voipToken'>

/** Register a push token for a session; registering it again updates its VoIP fields. */
export async function upsertPushDevice(sessionId: string, device: PushDevice): Promise<void> {
  return await write(async (w) => {
    await w
      .insert(t.pushDevices)
      .values({ sessionId, ...device, createdAt: clock.now() })
      .onConflictDoUpdate({
        target: [t.pushDevices.sessionId, t.pushDevices.provider, t.pushDevices.token],
        set: { voipProvider: device.voipProvider, voipToken: device.voipToken },
      })
      .run()
  })
}

export async function deletePushDeviceByToken(sessionId: string, token: string): Promise<void> {
  return await write(async (w) => {
    await w
      .delete(t.pushDevices)
      .where(and(eq(t.pushDevices.token, token), eq(t.pushDevices.sessionId, sessionId)))
      .run()
  })
}

export async function deletePushDeviceByVoipToken(sessionId: string, voipToken: string): Promise<void> {
  return await write(async (w) => {
    await w
      .delete(t.pushDevices)
      .where(and(eq(t.pushDevices.voipToken, voipToken), eq(t.pushDevices.sessionId, sessionId)))
      .run()
  })
}
