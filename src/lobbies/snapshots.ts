// Lobby objects: the REST one (of rows the request already holds, or read fresh after a change commits) and the
// Gateway snapshot. `forApp`: the caller is the application's Bot (it alone sees override_event_webhooks_url).
import { lazy } from './effects'
import { linkedChannelObject } from './linked-channel'
import { findUsers } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import { gatewayLobby, restLobby } from './serialize'
import { cachedLobbyText, cachedLobby } from './store'
import { cachedLobbyMembers } from './members-store'
import type { LobbyMemberRow, LobbyRow } from './tables'

/**
 * The REST lobby object of a row the request has just read, and its members. Synchronous unless the lobby is linked
 * to a channel (the hot GET of an unlinked lobby makes no promise here).
 */
export function restView(lobby: LobbyRow, members: LobbyMemberRow[], forApp = false) {
  if (!lobby.linkedChannelId) return restLobby(lobby, members, undefined, forApp)
  return linkedChannelObject(lobby).then((channel) => restLobby(lobby, members, channel, forApp))
}

/**
 * GET /lobbies/{id}: restView as JSON text, cached with the lobby's rows when the lobby is not linked (the cached text
 * is the one without the override URL; the Bot's view of a lobby that has one is made each time).
 */
export function restText(lobby: LobbyRow, members: LobbyMemberRow[], forApp = false): string | Promise<string> {
  if (lobby.linkedChannelId)
    return Promise.resolve(restView(lobby, members, forApp)).then((view) => JSON.stringify(view))
  if (forApp && lobby.overrideEventWebhooksUrl) return JSON.stringify(restLobby(lobby, members, undefined, true))
  return cachedLobbyText(lobby.id, () => JSON.stringify(restLobby(lobby, members, undefined)))
}

/** The REST lobby object read fresh after a change committed. */
export async function lobbyView(lobby: LobbyRow, forApp = false) {
  const row = (await cachedLobby(lobby.id)) ?? lobby
  return restView(row, await cachedLobbyMembers(row.id), forApp)
}

export async function gatewayView(lobbyId: string) {
  const lobby = await cachedLobby(lobbyId)
  if (!lobby) return undefined
  return gatewayLobby(lobby, await cachedLobbyMembers(lobby.id), await linkedChannelObject(lobby))
}

/** The Gateway lobby object as it is when the event goes out. */
export const lobbySnapshot = (lobbyId: string) => lazy(() => gatewayView(lobbyId))

/**
 * GET /lobbies/{id} for a user session (a member): the Gateway lobby object (members with `connected`, the call's
 * `voice_states`), each member with its public `user`, so a page can name the members before they act.
 */
export async function memberView(lobby: LobbyRow, members: LobbyMemberRow[]) {
  const users = await findUsers(members.map((m) => m.userId))
  const view = gatewayLobby(lobby, members, lobby.linkedChannelId ? await linkedChannelObject(lobby) : undefined)
  return {
    ...view,
    members: view.members.map((m) => {
      const user = users.get(m.id)
      return { ...m, ...(user ? { user: publicUser(user) } : {}) }
    }),
  }
}
