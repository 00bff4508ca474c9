// The linked guild channel as lobby objects show it, and the copy of lobby messages in it.
import { hasGrant } from '../oauth2/store'
import { cachedUser } from '../accounts/store'
import { guildPort } from './guild-port'
import { LobbyFlags } from './limits'
import { setChannelCopy } from './messages-store'
import type { LobbyRow } from './tables'

export async function linkedChannelObject(lobby: LobbyRow): Promise<unknown> {
  const port = guildPort()
  if (!lobby.linkedChannelId || !port) return undefined
  return (await port.serializeChannel(lobby.linkedChannelId)) ?? undefined
}

/** Copy a lobby message to the linked channel; the copy's id is kept with the message (moderation updates name it). */
export async function mirrorToLinkedChannel(
  lobby: LobbyRow,
  messageId: string,
  authorId: string,
  content: string,
): Promise<void> {
  const port = guildPort()
  if (!lobby.linkedChannelId || !port) return
  // REQUIRE_APPLICATION_AUTHORIZATION: users must have authorized the application to speak in the channel.
  if (lobby.flags & LobbyFlags.REQUIRE_APPLICATION_AUTHORIZATION) {
    const author = await cachedUser(authorId)
    if (!author?.bot && !(await hasGrant(authorId, lobby.applicationId))) return
  }
  const copy = await port.createChannelMessage({ channelId: lobby.linkedChannelId, authorId, content })
  if (copy?.id) await setChannelCopy(messageId, copy.id)
}
