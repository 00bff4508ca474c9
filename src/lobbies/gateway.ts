// What lobbies tell the Gateway: the lobby topics a new session joins, and which sessions keep lobbies active (the
// idle rule, activity.ts). (Op 17, the lobby call, is the voice domain's: src/voice/gateway.ts.)
import type { Caller } from '../core/caller'
import { audiences, events, type GatewayConnection, sees, topics } from '../gateway/bus'
import { profilePresence } from '../relationships/profile'
import { sessionEnded, sessionStarted } from './activity'
import { cachedLobbyMembers, lobbyIdsOfUser } from './members-store'
import { cachedLobby } from './store'

export async function lobbyIdentify(caller: Caller) {
  if (caller.kind === 'bot') return {}
  // A user session hears about all of the user's lobbies; an OAuth2 session with `lobbies.write` about its own
  // application's (gateway/bus.ts sees), without it about none.
  if (caller.kind === 'bearer' && !sees(caller, audiences.lobby(caller.applicationId))) return {}
  const ids = await lobbyIdsOfUser(caller.userId, ownApplication(caller))
  return { topics: ids.map(topics.lobby) }
}

export const lobbySessionStart = async (connection: GatewayConnection) => await sessionStarted(connection.caller)
// A dead node's session (orphan) was counted on that node, whose counts are dropped already.
export const lobbySessionEnd = async (connection: GatewayConnection) =>
  await sessionEnded(connection.caller, !connection.orphan)

/** The application an OAuth2 session's lobbies are limited to (the web client's first-party token: none, all of them). */
function ownApplication(caller: Caller): string | undefined {
  return caller.kind === 'bearer' && !caller.firstParty ? caller.applicationId : undefined
}

/**
 * A member's changed profile (its display name) reaches its lobby-mates: PRESENCE_UPDATE with the new user on each of
 * its lobbies' topics (relationships/profile.ts: USER_UPDATE is the user's own, as Discord's).
 */
export async function tellLobbyMatesProfile(userId: string): Promise<void> {
  const ids = await lobbyIdsOfUser(userId)
  if (!ids.length) return
  const data = await profilePresence(userId)
  for (const id of ids) events.publish(topics.lobby(id), 'PRESENCE_UPDATE', data)
}

/** Presence's port (relationships/lobby-port.ts): a user's lobbies (of one application, if given) with their members. */
export async function lobbiesWithMembers(userId: string, applicationId?: string) {
  const out: { id: string; applicationId: string; memberIds: string[] }[] = []
  for (const id of await lobbyIdsOfUser(userId, applicationId)) {
    const lobby = await cachedLobby(id)
    if (lobby)
      out.push({
        id,
        applicationId: lobby.applicationId,
        memberIds: (await cachedLobbyMembers(id)).map((m) => m.userId),
      })
  }
  return out
}
