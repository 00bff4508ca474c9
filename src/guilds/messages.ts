// Channel messages: create (SEND_MESSAGES; a reply also READ_MESSAGE_HISTORY) and read (READ_MESSAGE_HISTORY),
// newest first.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { snowflake } from '../core/snowflake'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import type { Paging } from '../http/form'
import { messageAccess } from './access'
import { announce, announceDmChannel, checkDmSend, type MessageAccess, type Recipients } from './dm-channels'
import { checkEmbeds } from './embeds'
import { Errors } from '../core/errors'
import { emptyMessage, notTextChannel, unknownReplyTarget } from './errors'
import { checkAllowedMentions, resolveMentions } from './mentions'
import { has } from './permissions'
import type { MessageInput } from './schemas'
import { messageForEvent, serializeMessage, serializeMessages } from './serialize'
import { cachedChannel } from './store'
import {
  lockMessageNonce,
  cachedMessagePage,
  channelMessages,
  findMessage,
  insertMessage,
  messageInChannel,
  recentMessageWithNonce,
  setLastMessageId,
} from './messages-store'
import { reactionCounts } from './reactions-store'
import { type ChannelRow, type Embed, type Mentions, type MessageRow, NO_MENTIONS } from './tables'

/** How long enforce_nonce remembers a nonce (Discord: "the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000

export async function postMessage(userId: string, channelId: string, input: MessageInput) {
  const access = await messageAccess(channelId, userId, Permission.SEND_MESSAGES)
  const { channel } = access
  if (access.recipients) await checkDmSend(access.recipients, userId)
  const embeds = checkEmbeds(input.embeds) ?? []
  const content = input.content ?? ''
  if (!content && !embeds.length) throw emptyMessage()
  checkAllowedMentions(input.allowed_mentions)
  const replied = await replyTarget(access, input.message_reference)
  const mentions = await resolveMentions(
    channel.guildId,
    access.permissions,
    content,
    input.allowed_mentions,
    replied?.authorId !== userId ? replied?.authorId : undefined,
  )
  return writeMessage(channel, userId, content, input.nonce, input.enforce_nonce === true, embeds, {
    referenceId: replied?.id,
    mentions,
    recipients: access.recipients,
  })
}

/**
 * The message a reply names: one of this channel, read with READ_MESSAGE_HISTORY (50013). Anything else is 50035
 * MESSAGE_REFERENCE_UNKNOWN_MESSAGE, or, with `fail_if_not_exists: false`, a message that replies to nothing.
 */
async function replyTarget(
  { channel, permissions }: MessageAccess,
  reference: MessageInput['message_reference'],
): Promise<MessageRow | undefined> {
  if (!reference) return undefined
  if (!has(permissions, Permission.READ_MESSAGE_HISTORY)) throw Errors.missingPermissions()
  const here =
    (reference.channel_id ?? channel.id) === channel.id && (reference.guild_id ?? channel.guildId) === channel.guildId
  const found = here ? await messageInChannel(channel.id, reference.message_id) : undefined
  if (found) return found
  if (reference.fail_if_not_exists === false) return undefined
  throw unknownReplyTarget()
}

/**
 * Store a message and announce MESSAGE_CREATE to everyone who can view the channel. With `enforceNonce` and a nonce,
 * a message the same author sent with that nonce in the last few minutes is returned instead (in the transaction
 * that would insert, so parallel sends make one message).
 */
export async function writeMessage(
  channel: ChannelRow,
  authorId: string,
  content: string,
  nonce?: string | number,
  enforceNonce = false,
  embeds: Embed[] = [],
  extra: { referenceId?: string; mentions?: Mentions; recipients?: Recipients } = {},
) {
  const { recipients } = extra
  if (channel.type !== (recipients ? ChannelType.DM : ChannelType.GUILD_TEXT)) throw notTextChannel()
  const id = snowflake()
  let created: Awaited<ReturnType<typeof serializeMessage>> | undefined
  const row = await transaction(async (tx) => {
    created = undefined
    if (enforceNonce && nonce !== undefined) {
      await lockMessageNonce(tx, channel.id, authorId, String(nonce)) // looked for, then written: one at a time
      const earlier = await recentMessageWithNonce(channel.id, authorId, String(nonce), clock.now() - NONCE_WINDOW_MS)
      if (earlier) return earlier
    }
    const inserted = await insertMessage({
      id,
      channelId: channel.id,
      authorId,
      content,
      nonce: nonce === undefined ? null : String(nonce),
      createdAt: clock.now(),
      embeds,
      referenceId: extra.referenceId ?? null,
      mentions: extra.mentions ?? NO_MENTIONS,
    })
    await setLastMessageId(channel.id, id)
    // Given in the transaction (an outbox row with several nodes). The event, not the REST answer, carries the
    // members of its author and of those it mentions, as Discord's does.
    created = await serializeMessage(inserted, channel.guildId)
    // A DM's first message: its recipient learns of the channel first (Discord's CHANNEL_CREATE), then the message.
    if (recipients && channel.lastMessageId === null)
      for (const other of recipients.filter((r) => r !== authorId))
        await announceDmChannel({ ...channel, lastMessageId: id }, recipients, other)
    announce({ channel, recipients }, 'MESSAGE_CREATE', await messageForEvent(created, channel.guildId))
    return inserted
  })
  return created ?? (await serializeMessage(row, channel.guildId))
}

/**
 * GET /channels/{id}/messages as JSON text: access, the page and its authors in one snapshot (one read
 * transaction). The page's text is kept until the channel gets a message or an author changes (store.ts).
 */
export async function readMessages(userId: string, channelId: string, query: Paging): Promise<string> {
  return await reading(async () => {
    const { channel } = await messageAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
    const key = `${query.limit} ${query.before ?? ''} ${query.after ?? ''} ${query.around ?? ''}`
    // A page with reactions differs by reader (their `me`), so it is kept per reader; one without, once for all.
    const shared = await cachedMessagePage(channel.id, key, async () => await pageText(channel, query, null))
    if (shared !== PER_READER) return shared
    return await cachedMessagePage(channel.id, `${userId} ${key}`, async () => await pageText(channel, query, userId))
  })
}

/** What the shared entry of a page holds when its messages have reactions. */
const PER_READER = ''

async function pageText(channel: ChannelRow, query: Paging, readerId: string | null): Promise<string> {
  const rows = await channelMessages(channel.id, query)
  const reactions = await reactionCounts(
    rows.map((m) => m.id),
    readerId,
  )
  if (readerId === null && reactions.size) return PER_READER
  return JSON.stringify(await serializeMessages(rows, channel.guildId, reactions))
}

/**
 * MESSAGE_UPDATE for a message whose lobby original got moderation metadata (lobbies' linked channels): the message
 * as stored, with the metadata the application wrote (the channel keeps no copy of it, as Discord's does not). Called
 * inside the moderation's transaction.
 */
export async function announceModeration(messageId: string, moderationMetadata: Record<string, string>): Promise<void> {
  const row = await findMessage(messageId)
  const channel = row && (await cachedChannel(row.channelId))
  if (!row || !channel) return
  events.publish(topics.channel(channel.id), 'MESSAGE_UPDATE', {
    ...(await serializeMessage(row, channel.guildId)),
    moderation_metadata: moderationMetadata,
  })
}
