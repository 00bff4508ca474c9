// GET /users/@me/lobbies: the lobbies of the token's user, for a home page ("my lobbies"). A game's OAuth2 token lists
// its application's; the web client's first-party token every application's, as its Gateway session hears them.
import type { BearerCaller } from '../core/caller'
import { findApplication } from '../oauth2/store'
import { lobbyWithMembers } from './access'
import type { LobbyMemberRow, LobbyRow } from './tables'
import { memberView, restText } from './snapshots'
import { lobbyIdsOfUser } from './members-store'

export async function userLobbies(caller: BearerCaller, max: number): Promise<unknown[]> {
  const ids = await lobbyIdsOfUser(caller.userId, caller.firstParty ? undefined : caller.applicationId)
  // Snowflakes of one length sort as numbers; the newest first.
  ids.sort((a, b) => b.length - a.length || (a < b ? 1 : a > b ? -1 : 0))
  const out: unknown[] = []
  for (const id of ids.slice(0, max)) {
    // A lobby deleted or left since the id list was read is skipped.
    const found = await lobbyWithMembers(caller, id, { asMember: true }).catch(() => undefined)
    if (!found) continue
    if (caller.firstParty) out.push(await webClientView(found.lobby, found.members))
    else {
      const text = await restText(found.lobby, found.members, false)
      out.push(JSON.parse(text))
    }
  }
  return out
}

/**
 * A lobby as the web client's first-party token reads it: as the Gateway shows it, members named (memberView), with
 * the name of the application it belongs to (the page's title when the lobby's metadata has no `name`).
 */
export async function webClientView(lobby: LobbyRow, members: LobbyMemberRow[]) {
  const app = await findApplication(lobby.applicationId)
  return { ...(await memberView(lobby, members)), application: { id: lobby.applicationId, name: app?.name ?? '' } }
}
