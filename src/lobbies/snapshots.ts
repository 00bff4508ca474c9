// Lobby objects read fresh after a change commits: the REST one and the Gateway snapshot.
import { lazy } from './effects'
import { linkedChannelObject } from './linked-channel'
import { gatewayLobby, restLobby } from './serialize'
import { getLobby, listMembers } from './store'
import type { LobbyRow } from './tables'

export async function lobbyView(lobby: LobbyRow) {
  const fresh = getLobby(lobby.id) ?? lobby
  return restLobby(fresh, listMembers(fresh.id), await linkedChannelObject(fresh))
}

export async function gatewayView(lobbyId: string) {
  const lobby = getLobby(lobbyId)
  if (!lobby) return undefined
  return gatewayLobby(lobby, listMembers(lobby.id), await linkedChannelObject(lobby))
}

/** The Gateway lobby object as it is when the event goes out. */
export const lobbySnapshot = (lobbyId: string) => lazy(() => gatewayView(lobbyId))
