// Channel messages: create (SEND_MESSAGES) and read (READ_MESSAGE_HISTORY), newest first.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { snowflake } from '../core/snowflake'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import type { Paging } from '../http/form'
import { channelAccess } from './access'
import { checkEmbeds } from './embeds'
import { emptyMessage, notTextChannel } from './errors'
import type { MessageInput } from './schemas'
import { memberFields, serializeMessage, serializeMessages } from './serialize'
import {
  lockMessageNonce,
  cachedMessagePage,
  channelMessages,
  findMessage,
  cachedChannel,
  cachedGuildMember,
  insertMessage,
  reactionCounts,
  recentMessageWithNonce,
  setLastMessageId,
} from './store'
import type { ChannelRow, Embed } from './tables'

/** How long enforce_nonce remembers a nonce (Discord: "the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000

export async function postMessage(userId: string, channelId: string, input: MessageInput) {
  const { channel } = await channelAccess(channelId, userId, Permission.SEND_MESSAGES)
  const embeds = checkEmbeds(input.embeds) ?? []
  const content = input.content ?? ''
  if (!content && !embeds.length) throw emptyMessage()
  return writeMessage(channel, userId, content, input.nonce, input.enforce_nonce === true, embeds)
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
) {
  if (channel.type !== ChannelType.GUILD_TEXT) throw notTextChannel()
  const id = snowflake()
  let fresh = true
  const row = await transaction(async (tx) => {
    if (enforceNonce && nonce !== undefined) {
      await lockMessageNonce(tx, channel.id, authorId, String(nonce)) // looked for, then written: one at a time
      const earlier = await recentMessageWithNonce(
        tx,
        channel.id,
        authorId,
        String(nonce),
        clock.now() - NONCE_WINDOW_MS,
      )
      if (earlier) {
        fresh = false
        return earlier
      }
    }
    const inserted = await insertMessage(tx, {
      id,
      channelId: channel.id,
      authorId,
      content,
      nonce: nonce === undefined ? null : String(nonce),
      createdAt: clock.now(),
      embeds,
    })
    await setLastMessageId(tx, channel.id, id)
    return inserted
  })
  const body = await serializeMessage(row, channel.guildId)
  if (fresh) {
    // The event, not the REST answer, carries the author's member, as Discord's does.
    const member = await cachedGuildMember(channel.guildId, authorId)
    events.publish(
      topics.channel(channel.id),
      'MESSAGE_CREATE',
      member ? { ...body, member: await memberFields(member) } : body,
    )
  }
  return body
}

/**
 * GET /channels/{id}/messages as JSON text: access, the page and its authors in one snapshot (one read
 * transaction). The page's text is kept until the channel gets a message or an author changes (store.ts).
 */
export async function readMessages(userId: string, channelId: string, query: Paging): Promise<string> {
  return await reading(async () => {
    const { channel } = await channelAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
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
 * as stored, with the metadata the application wrote (the channel keeps no copy of it, as Discord's does not).
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
