// What presence needs from the lobbies domain (a floor above): the lobbies a user is in, with their members, so that
// lobby-mates see each other's presence. The lobbies module fills it; without it (no lobbies mounted) there are none.
import { appState } from '../core/app'

export type LobbyOfUser = { id: string; applicationId: string; memberIds: string[] }

export type LobbyPort = {
  /** The user's lobbies (of one application, if given), with their members' ids. */
  lobbiesOf(userId: string, applicationId?: string): Promise<LobbyOfUser[]>
}

const newLobbyPort = () => ({ port: undefined as LobbyPort | undefined })
declare module '../core/app' {
  interface AppState {
    relationshipsLobbyPort: ReturnType<typeof newLobbyPort>
  }
}
const held = appState('relationshipsLobbyPort', newLobbyPort)

export function setLobbyPort(next: LobbyPort | undefined): void {
  held().port = next
}

export async function lobbiesOf(userId: string, applicationId?: string): Promise<LobbyOfUser[]> {
  return (await held().port?.lobbiesOf(userId, applicationId)) ?? []
}
