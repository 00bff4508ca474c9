// Channel messages: create (SEND_MESSAGES) and read (READ_MESSAGE_HISTORY), newest first.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { snowflake } from '../core/snowflake'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { channelAccess } from './access'
import { notTextChannel } from './errors'
import type { MessageInput } from './schemas'
import { serializeMessage, serializeMessages } from './serialize'
import { channelMessages, insertMessage, recentMessageWithNonce, setLastMessageId } from './store'
import type { ChannelRow } from './tables'

/** How long enforce_nonce remembers a nonce (Discord: "the past few minutes"). */
const NONCE_WINDOW_MS = 5 * 60_000

export async function postMessage(userId: string, channelId: string, input: MessageInput) {
  const { channel } = channelAccess(channelId, userId, Permission.SEND_MESSAGES)
  return writeMessage(channel, userId, input.content, input.nonce, input.enforce_nonce === true)
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
) {
  if (channel.type !== ChannelType.GUILD_TEXT) throw notTextChannel()
  const id = snowflake()
  let fresh = true
  const row = transaction((tx) => {
    if (enforceNonce && nonce !== undefined) {
      const earlier = recentMessageWithNonce(tx, channel.id, authorId, String(nonce), clock.now() - NONCE_WINDOW_MS)
      if (earlier) {
        fresh = false
        return earlier
      }
    }
    const inserted = insertMessage(tx, {
      id,
      channelId: channel.id,
      authorId,
      content,
      nonce: nonce === undefined ? null : String(nonce),
      createdAt: clock.now(),
    })
    setLastMessageId(tx, channel.id, id)
    return inserted
  })
  const body = serializeMessage(row, channel.guildId)
  if (fresh) events.publish(topics.channel(channel.id), 'MESSAGE_CREATE', body)
  return body
}

/** Access, the page and its authors in one snapshot (one read transaction). */
export function readMessages(
  userId: string,
  channelId: string,
  query: { limit?: number; before?: string; after?: string; around?: string },
) {
  return reading(() => {
    const { channel } = channelAccess(channelId, userId, Permission.READ_MESSAGE_HISTORY)
    const rows = channelMessages(channel.id, {
      limit: query.limit ?? 50,
      before: query.before,
      after: query.after,
      around: query.around,
    })
    return serializeMessages(rows, channel.guildId)
  })
}
