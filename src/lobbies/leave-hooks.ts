// Who wants to know, after the commit, that a member left a lobby (removed, or the lobby deleted): the voice domain
// drops them from the lobby's call at once. Registered at start-up (app.ts), so lobbies import no other domain.
import { appState } from '../core/app'
import { log } from '../core/log'

export type LeaveReason = 'removed' | 'deleted'
type Listener = (lobbyId: string, userId: string, reason: LeaveReason) => void | Promise<void>

/** What this module holds per App (core/app.ts). */
const newLeaveHooks = () => ({
  listeners: [] as Listener[],
})
declare module '../core/app' {
  interface AppState {
    leaveHooks: ReturnType<typeof newLeaveHooks>
  }
}
const held = appState('leaveHooks', newLeaveHooks)

export function onMemberLeave(listener: Listener): void {
  const st = held()
  if (!st.listeners.includes(listener)) st.listeners.push(listener)
}

export async function notifyMemberLeave(lobbyId: string, userId: string, reason: LeaveReason): Promise<void> {
  for (const listener of held().listeners) {
    try {
      await listener(lobbyId, userId, reason)
    } catch (error) {
      log.error('member leave hook failed', { error: String(error) })
    }
  }
}
