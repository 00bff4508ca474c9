// One channel message: read (READ_MESSAGE_HISTORY), edited by its author (MESSAGE_UPDATE), deleted by its author or
// with MANAGE_MESSAGES (MESSAGE_DELETE), several deleted at once with MANAGE_MESSAGES (MESSAGE_DELETE_BULK); and
// TYPING_START. Events go to the channel's viewers after the commit.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { cachedUser } from '../accounts/store'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { messageAccess } from './access'
import { announce, checkDmSend } from './dm-channels'
import { checkEmbeds } from './embeds'
import { cannotEditOthers, emptyMessage, notTextChannel, tooOldToBulkDelete } from './errors'
import { BULK_DELETE_MAX_AGE_MS } from './limits'
import { checkAllowedMentions, resolveMentions } from './mentions'
import { has } from './permissions'
import type { MessageEditInput } from './schemas'
import { messageForEvent, serializeMember, serializeMessage } from './serialize'
import { deleteMessageRows, messageInChannel, messagesInChannel, updateMessageRow } from './messages-store'
import { reactionCounts } from './reactions-store'
import type { Mentions, MessageRow } from './tables'

/** The message of this channel, or 404 10008. */
export async function messageOf(channelId: string, messageId: string): Promise<MessageRow> {
  const row = await messageInChannel(channelId, messageId)
  if (!row) throw Errors.unknownMessage()
  return row
}

/** A message as the reader sees it (its reactions' `me`). */
export async function messageFor(row: MessageRow, guildId: string | null, readerId: string) {
  return await serializeMessage(row, guildId, (await reactionCounts([row.id], readerId)).get(row.id))
}

/** A message as the channel's viewers get it in an event: with its author's member, as MESSAGE_CREATE. */
export async function messageEvent(row: MessageRow, guildId: string | null) {
  return await messageForEvent(await serializeMessage(row, guildId), guildId)
}

export async function getMessage(userId: string, channelId: string, messageId: string) {
  return await reading(async () => {
    const { channel } = await messageAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
    return await messageFor(await messageOf(channel.id, messageId), channel.guildId, userId)
  })
}

/** The author changes content or embeds (null clears one); the message may not end up empty. */
export async function editMessage(userId: string, channelId: string, messageId: string, input: MessageEditInput) {
  const access = await messageAccess(channelId, userId)
  const { channel, permissions } = access
  const found = await messageOf(channel.id, messageId)
  if (found.authorId !== userId) throw cannotEditOthers()
  const embeds = checkEmbeds(input.embeds) ?? found.embeds
  const content = input.content === undefined ? found.content : (input.content ?? '')
  if (!content && !embeds.length) throw emptyMessage()
  checkAllowedMentions(input.allowed_mentions)
  const mentions =
    input.content === undefined
      ? found.mentions
      : await editedMentions(found, channel.guildId, permissions, content, input.allowed_mentions)
  const row = await transaction(async (tx) => {
    const row = await updateMessageRow(tx, channel.id, found.id, { content, embeds, mentions, editedAt: clock.now() })
    if (row) announce(access, 'MESSAGE_UPDATE', await messageEvent(row, channel.guildId))
    return row
  })
  if (!row) throw Errors.unknownMessage()
  return await messageFor(row, channel.guildId, userId)
}

/** New content is resolved again (under the edit's allowed_mentions); a reply keeps mentioning whom it replied to. */
async function editedMentions(
  found: MessageRow,
  guildId: string | null,
  permissions: bigint,
  content: string,
  allowed: MessageEditInput['allowed_mentions'],
): Promise<Mentions> {
  const resolved = await resolveMentions(guildId, permissions, content, allowed)
  const repliedTo = found.referenceId ? (await messageInChannel(found.channelId, found.referenceId))?.authorId : null
  if (!repliedTo || !found.mentions.users.includes(repliedTo) || resolved.users.includes(repliedTo)) return resolved
  return { ...resolved, users: [...resolved.users, repliedTo] }
}

export async function deleteMessage(userId: string, channelId: string, messageId: string): Promise<void> {
  const access = await messageAccess(channelId, userId)
  const { channel, permissions } = access
  const found = await messageOf(channel.id, messageId)
  if (found.authorId !== userId && !has(permissions, Permission.MANAGE_MESSAGES)) throw Errors.missingPermissions()
  const deleted = await transaction(async (tx) => {
    const deleted = await deleteMessageRows(tx, channel.id, [found.id])
    if (deleted.length)
      announce(access, 'MESSAGE_DELETE', {
        id: found.id,
        channel_id: channel.id,
        ...(channel.guildId === null ? {} : { guild_id: channel.guildId }),
      })
    return deleted
  })
  if (!deleted.length) throw Errors.unknownMessage()
}

/**
 * Delete 2 to 100 messages (MANAGE_MESSAGES). Ids of messages that are not in the channel count towards the limits
 * and are passed over, as Discord's are; one message older than two weeks refuses them all (50034).
 */
export async function bulkDeleteMessages(userId: string, channelId: string, ids: string[]): Promise<void> {
  const { channel } = await messageAccess(channelId, userId, Permission.MANAGE_MESSAGES)
  await transaction(async (tx) => {
    const found = await messagesInChannel(channel.id, [...new Set(ids)], tx)
    if (found.some((m) => m.createdAt < clock.now() - BULK_DELETE_MAX_AGE_MS)) throw tooOldToBulkDelete()
    const deleted = await deleteMessageRows(
      tx,
      channel.id,
      found.map((m) => m.id),
    )
    if (deleted.length)
      events.publish(topics.channel(channel.id), 'MESSAGE_DELETE_BULK', {
        ids: deleted,
        channel_id: channel.id,
        guild_id: channel.guildId,
      })
  })
}

/** TYPING_START to the channel's viewers (SEND_MESSAGES), with the typist's member; clients show it for 10 s. */
export async function startTyping(userId: string, channelId: string): Promise<void> {
  const access = await messageAccess(channelId, userId, Permission.SEND_MESSAGES)
  const { channel, member, recipients } = access
  if (recipients) await checkDmSend(recipients, userId)
  else if (channel.type !== ChannelType.GUILD_TEXT) throw notTextChannel()
  announce(access, 'TYPING_START', {
    channel_id: channel.id,
    ...(channel.guildId === null ? {} : { guild_id: channel.guildId }),
    user_id: userId,
    timestamp: Math.floor(clock.now() / 1000),
    ...(member ? { member: await serializeMember(member, await cachedUser(userId)) } : {}),
  })
}
