// Every query of the auth domain: the push tokens a session registers. (Users, sessions and the other account rows
// are queried through accounts/store.ts.)
import { and, eq } from 'drizzle-orm'
import { clock } from '../core/clock'
import { write } from '../db/client'
import { pushDevices } from './tables'

export type PushDevice = { provider: string; token: string; voipProvider: string | null; voipToken: string | null }

/** Register a push token for a session; registering it again updates its VoIP fields. */
export async function upsertPushDevice(sessionId: string, device: PushDevice): Promise<void> {
  return await write((w) => {
    w.insert(pushDevices)
      .values({ sessionId, ...device, createdAt: clock.now() })
      .onConflictDoUpdate({
        target: [pushDevices.sessionId, pushDevices.provider, pushDevices.token],
        set: { voipProvider: device.voipProvider, voipToken: device.voipToken },
      })
      .run()
  })
}

export async function deletePushDeviceByToken(sessionId: string, token: string): Promise<void> {
  return await write((w) => {
    w.delete(pushDevices)
      .where(and(eq(pushDevices.token, token), eq(pushDevices.sessionId, sessionId)))
      .run()
  })
}

export async function deletePushDeviceByVoipToken(sessionId: string, voipToken: string): Promise<void> {
  return await write((w) => {
    w.delete(pushDevices)
      .where(and(eq(pushDevices.voipToken, voipToken), eq(pushDevices.sessionId, sessionId)))
      .run()
  })
}
