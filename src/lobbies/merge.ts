// A provisional account merged into a full account (issue 44, part 4; src/provisional/merge.ts runs it inside the
// OAuth2 code's transaction): in each of the application's lobbies the provisional member is removed and the full
// account added with its metadata and flags (unless it is a member already), with the events a client needs
// (LOBBY_MEMBER_REMOVE and LOBBY_MEMBER_ADD to the lobby, LOBBY_DELETE to the provisional sessions, LOBBY_CREATE to the
// full account's); its lobby messages become the full account's.
import type { DB } from '../db/client'
import { moveLobbyMessages } from './messages-store'
import { Effects } from './effects'
import { changeMembers, memberEffects } from './member-changes'
import { cachedLobbyMembers, lobbyIdsOfUser } from './members-store'
import { cachedLobby } from './store'

export async function mergeLobbyMember(
  tx: DB,
  applicationId: string,
  from: string,
  to: string,
): Promise<{ lobbies: number; messages: number }> {
  const effects = new Effects()
  const ids = await lobbyIdsOfUser(from, applicationId)
  for (const id of ids) {
    const lobby = await cachedLobby(id)
    if (!lobby) continue
    const members = await cachedLobbyMembers(id)
    const was = members.find((m) => m.userId === from)
    const upserts =
      was && !members.some((m) => m.userId === to) ? [{ id: to, metadata: was.metadata, flags: was.flags }] : []
    memberEffects(lobby, await changeMembers(tx, lobby, upserts, [from]), effects)
  }
  const messages = await moveLobbyMessages(tx, applicationId, from, to)
  await effects.flush()
  return { lobbies: ids.length, messages }
}
