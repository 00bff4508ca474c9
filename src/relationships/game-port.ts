// What relationships need from the domains beside and above them, filled by the lobbies module: the lobbies a user is
// in, with their members (lobby-mates see each other's presence), and the applications (oauth2/, on this floor): whether
// a user authorized one (game relationships need both users to have), and its name (a game invite shows it). Without it
// (no lobbies mounted) there are no lobbies and no authorizations.
import { appState } from '../core/app'

export type LobbyOfUser = { id: string; applicationId: string; memberIds: string[] }

export type GamePort = {
  /** The user's lobbies (of one application, if given), with their members' ids. */
  lobbiesOf(userId: string, applicationId?: string): Promise<LobbyOfUser[]>
  /** Whether the user has a live grant for the application. */
  authorized(userId: string, applicationId: string): Promise<boolean>
  /** The application's name (undefined: no such application). */
  applicationName(applicationId: string): Promise<string | undefined>
}

const newGamePort = () => ({ port: undefined as GamePort | undefined })
declare module '../core/app' {
  interface AppState {
    relationshipsGamePort: ReturnType<typeof newGamePort>
  }
}
const held = appState('relationshipsGamePort', newGamePort)

export function setGamePort(next: GamePort | undefined): void {
  held().port = next
}

export async function lobbiesOf(userId: string, applicationId?: string): Promise<LobbyOfUser[]> {
  return (await held().port?.lobbiesOf(userId, applicationId)) ?? []
}

export async function authorized(userId: string, applicationId: string): Promise<boolean> {
  return (await held().port?.authorized(userId, applicationId)) ?? false
}

export async function applicationName(applicationId: string): Promise<string | undefined> {
  return await held().port?.applicationName(applicationId)
}
