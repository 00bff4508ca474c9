// Reactions with unicode emoji (the model has no custom emoji: `name:id` is 10014 Unknown Emoji). Adding one needs
// READ_MESSAGE_HISTORY, and ADD_REACTIONS when the message has no reaction with that emoji yet; at most 20 emoji per
// message (30010). Removing another user's reactions needs MANAGE_MESSAGES. MESSAGE_REACTION_ADD, _REMOVE,
// _REMOVE_ALL and _REMOVE_EMOJI go to the channel's viewers, only when something changed.
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { publicUser } from '../accounts/serialize'
import { cachedUser, findUsers } from '../accounts/store'
import { reading, transaction } from '../db/client'
import type { Paging } from '../http/form'
import { messageAccess } from './access'
import { announce, type MessageAccess } from './dm-channels'
import { maxReactions, unknownEmoji } from './errors'
import { MAX_REACTION_EMOJI } from './limits'
import { messageOf } from './message-changes'
import { has } from './permissions'
import { serializeMember } from './serialize'
import { lockMessage, messageInChannel } from './messages-store'
import { deleteReaction, deleteReactions, insertReaction, messageEmoji, reactionUserIds } from './reactions-store'

// A fully-qualified emoji (keycaps, flags, sequences), or a pictograph with or without its emoji presentation.
const UNICODE_EMOJI = /^(?:\p{RGI_Emoji}|\p{Extended_Pictographic}\uFE0F?)$/v

/** The emoji of a path (decoded), or 400 10014. */
export function emojiOf(value: string): string {
  if (!UNICODE_EMOJI.test(value)) throw unknownEmoji()
  return value
}

const emojiObject = (emoji: string) => ({ id: null, name: emoji })
const target = (access: MessageAccess, messageId: string) => ({
  channel_id: access.channel.id,
  message_id: messageId,
  ...(access.channel.guildId === null ? {} : { guild_id: access.channel.guildId }),
})

export async function addReaction(
  userId: string,
  channelId: string,
  messageId: string,
  rawEmoji: string,
): Promise<void> {
  const access = await messageAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
  const emoji = emojiOf(rawEmoji)
  await transaction(async (tx) => {
    await lockMessage(tx, messageId) // its count of emoji is checked, then written
    const row = await messageInChannel(access.channel.id, messageId, tx)
    if (!row) throw Errors.unknownMessage()
    const { kinds, has: present } = await messageEmoji(row.id, emoji, tx)
    if (!present && !has(access.permissions, Permission.ADD_REACTIONS)) throw Errors.missingPermissions()
    if (!present && kinds >= MAX_REACTION_EMOJI) throw maxReactions()
    const fresh = await insertReaction(tx, access.channel.id, {
      messageId: row.id,
      emoji,
      userId,
      createdAt: clock.now(),
    })
    if (!fresh) return
    announce(access, 'MESSAGE_REACTION_ADD', {
      user_id: userId,
      ...target(access, row.id),
      ...(access.member ? { member: await serializeMember(access.member, await cachedUser(userId)) } : {}),
      emoji: emojiObject(emoji),
      message_author_id: row.authorId,
      burst: false,
      burst_colors: [],
      type: 0,
    })
  })
}

/** Remove the caller's reaction, or (MANAGE_MESSAGES) another user's. */
export async function removeReaction(
  callerId: string,
  channelId: string,
  messageId: string,
  rawEmoji: string,
  userId: string,
): Promise<void> {
  const access = await messageAccess(channelId, callerId, userId === callerId ? 0n : Permission.MANAGE_MESSAGES)
  const emoji = emojiOf(rawEmoji)
  const message = await messageOf(access.channel.id, messageId)
  await transaction(async (tx) => {
    if (!(await deleteReaction(tx, access.channel.id, message.id, emoji, userId))) return
    announce(access, 'MESSAGE_REACTION_REMOVE', {
      user_id: userId,
      ...target(access, message.id),
      emoji: emojiObject(emoji),
      burst: false,
      type: 0,
    })
  })
}

/** Remove every reaction of a message, or every one with an emoji (MANAGE_MESSAGES). */
export async function clearReactions(
  userId: string,
  channelId: string,
  messageId: string,
  rawEmoji?: string,
): Promise<void> {
  const access = await messageAccess(channelId, userId, Permission.MANAGE_MESSAGES)
  const emoji = rawEmoji === undefined ? undefined : emojiOf(rawEmoji)
  const message = await messageOf(access.channel.id, messageId)
  await transaction(async (tx) => {
    if (!(await deleteReactions(tx, access.channel.id, message.id, emoji))) return
    if (emoji === undefined) announce(access, 'MESSAGE_REACTION_REMOVE_ALL', target(access, message.id))
    else
      announce(access, 'MESSAGE_REACTION_REMOVE_EMOJI', {
        ...target(access, message.id),
        emoji: emojiObject(emoji),
      })
  })
}

/** The users who reacted with an emoji, by id (READ_MESSAGE_HISTORY). */
export async function reactionUsers(
  userId: string,
  channelId: string,
  messageId: string,
  rawEmoji: string,
  page: Paging,
) {
  return await reading(async () => {
    const access = await messageAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
    const emoji = emojiOf(rawEmoji)
    const message = await messageOf(access.channel.id, messageId)
    const ids = await reactionUserIds(message.id, emoji, page.after ?? '0', page.limit)
    const users = await findUsers(ids)
    return ids.flatMap((id) => {
      const user = users.get(id)
      return user ? [publicUser(user)] : []
    })
  })
}
