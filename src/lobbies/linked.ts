// The linked guild channel: its object in lobby objects and the copy of lobby messages. Filled in once the
// guilds domain is available.
import type { LobbyRow } from './tables'

export function linkedChannelObject(lobby: LobbyRow): unknown {
  if (!lobby.linkedChannelId) return undefined
  return undefined
}

export async function mirrorToLinkedChannel(lobby: LobbyRow, _authorId: string, _content: string): Promise<void> {
  if (!lobby.linkedChannelId) return
}
