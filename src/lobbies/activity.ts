// The idle rule (spec §3: a lobby closes after "no activity for idle_timeout_seconds"). A lobby is active while any
// member is in its call or has an identified Gateway session; then its idle deadline is null. Otherwise the deadline
// (a column, so it survives restarts) is idle_timeout_seconds after the last activity: a message, a member change, a
// change of the lobby, the last member going offline or leaving the call. The sweeper (idle.ts) closes lobbies past it.
//
// Who is online lives in memory, as the Gateway sessions do (gateway/presence.ts, shared by the nodes when there are
// several): a user session counts for all the user's lobbies, an OAuth2 session for its application's lobbies.
// Sessions do not survive a restart, and one server's start arms every deadline.
import type { Caller } from '../core/caller'
import { clock } from '../core/clock'
import { transaction } from '../db/client'
import { anyoneOnline, countPresence, online } from '../gateway/presence'
import { armIdleDeadlineRow, clearIdleDeadline, cachedLobby, restartIdleDeadline } from './store'
import { clearIdleDeadlinesOf, cachedLobbyMembers, lobbyIdsOfUser } from './members-store'
import type { LobbyMemberRow, LobbyRow } from './tables'

/** The Gateway's presence keys: a user's identified user sessions, and its OAuth2 sessions of one application. */
const userKey = (userId: string) => `u:${userId}`
const appKey = (userId: string, applicationId: string) => `a:${userId}:${applicationId}`

export function isOnline(userId: string, applicationId: string): boolean {
  return online(userKey(userId)) || online(appKey(userId, applicationId))
}

/** A lobby is active while a member is in its call or online on the Gateway (its member list is cached). */
export async function lobbyActive(lobby: Pick<LobbyRow, 'id' | 'applicationId'>): Promise<boolean> {
  return activeWith(await cachedLobbyMembers(lobby.id), lobby.applicationId)
}

function activeWith(members: LobbyMemberRow[], applicationId: string): boolean {
  if (members.some((m) => m.voiceSessionId !== null)) return true
  if (!anyoneOnline()) return false
  return members.some((m) => isOnline(m.userId, applicationId))
}

/**
 * Activity now: the countdown starts over (idle_timeout_seconds as the row holds it in this transaction), or stays off
 * while the lobby is active. One UPDATE, without reading the lobby again.
 */
export async function touchLobby(lobby: Pick<LobbyRow, 'id' | 'applicationId'>): Promise<void> {
  if (activeWith(await cachedLobbyMembers(lobby.id), lobby.applicationId)) await clearIdleDeadline(lobby.id)
  else await restartIdleDeadline(lobby.id, clock.now())
}

/** Someone stopped keeping the lobby active: the countdown starts unless it already runs or the lobby is still active. */
export async function armIdleDeadline(lobbyId: string): Promise<void> {
  const lobby = await cachedLobby(lobbyId)
  if (!lobby || lobby.idleDeadline !== null || (await lobbyActive(lobby))) return
  await armIdleDeadlineRow(lobbyId, clock.now())
}

/** The lobbies a session counts for: all of a user's for a user session, its application's for an OAuth2 one. */
function scope(caller: Caller): { userId: string; applicationId?: string } | undefined {
  if (caller.kind === 'bot') return undefined
  return caller.kind === 'bearer' && !caller.firstParty
    ? { userId: caller.userId, applicationId: caller.applicationId }
    : { userId: caller.userId }
}

/** A Gateway session was identified: its user's lobbies are active. */
export async function sessionStarted(caller: Caller): Promise<void> {
  const s = scope(caller)
  if (!s) return
  countPresence(s.applicationId ? appKey(s.userId, s.applicationId) : userKey(s.userId), 1)
  await clearIdleDeadlinesOf(s.userId, s.applicationId)
}

/**
 * A Gateway session ended for good (not a resumable drop): lobbies nobody else keeps active start counting down.
 * `counted`: false for a dead node's session, whose count went with its node's.
 */
export async function sessionEnded(caller: Caller, counted = true): Promise<void> {
  const s = scope(caller)
  if (!s) return
  if (counted) countPresence(s.applicationId ? appKey(s.userId, s.applicationId) : userKey(s.userId), -1)
  if (isOnline(s.userId, s.applicationId ?? '')) return
  const ids = await lobbyIdsOfUser(s.userId, s.applicationId)
  if (ids.length)
    await transaction(async () => {
      for (const id of ids) await armIdleDeadline(id)
    })
}
