// Who wants to know, after the commit, that a member left a lobby (removed, or the lobby deleted): the voice domain
// drops them from the lobby's call at once. Registered at start-up (app.ts), so lobbies import no other domain.
import { log } from '../core/log'

export type LeaveReason = 'removed' | 'deleted'
type Listener = (lobbyId: string, userId: string, reason: LeaveReason) => void | Promise<void>

const listeners: Listener[] = []

export function onMemberLeave(listener: Listener): void {
  if (!listeners.includes(listener)) listeners.push(listener)
}

export async function notifyMemberLeave(lobbyId: string, userId: string, reason: LeaveReason): Promise<void> {
  for (const listener of listeners) {
    try {
      await listener(lobbyId, userId, reason)
    } catch (error) {
      log.error('member leave hook failed', { error: String(error) })
    }
  }
}
