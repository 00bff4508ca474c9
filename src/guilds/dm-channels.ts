// DM channels (type 1, issue 45) as the guild model holds them: a channel without a guild whose two recipients are its
// dm_channels row. Opened once per pair; read and written through the channel message routes by its recipients only
// (anyone else: 404 10003, as a guild channel of a guild one is not in); events go to both recipients' sessions that
// see DMs (publishToUser: one log entry each, in order with the rest). Who may open a DM or send in one is decided
// above guilds (src/dms/) and reaches this file through `dmRules`.
import { cachedUser, findUsers } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { audiences, events, topics } from '../gateway/bus'
import { cachedDmRecipients, dmChannelOfPair, dmChannelsOfUser, insertDmPair } from './dm-store'
import { cannotMessageUser } from './errors'
import { deleteChannelRow, insertChannel } from './store'
import type { ChannelRow, MemberRow } from './tables'

/** What a recipient may do in a DM: read, write, react; not delete the other's messages nor pin (MANAGE_MESSAGES). */
export const DM_PERMISSIONS =
  Permission.VIEW_CHANNEL |
  Permission.SEND_MESSAGES |
  Permission.READ_MESSAGE_HISTORY |
  Permission.ADD_REACTIONS |
  Permission.EMBED_LINKS |
  Permission.ATTACH_FILES

/** The two users of a DM. */
export type Recipients = readonly [string, string]

/**
 * Who may message whom, installed by the dms module (it knows relationships and lobbies, which guilds stands below).
 * `maySend`: a message in an existing DM (a block either way stops it). Without the module, nothing is refused.
 */
export type DmRules = { maySend(senderId: string, recipientId: string): Promise<boolean> }
const held = appState('dmRules', (): { rules: DmRules } => ({ rules: { maySend: async () => true } }))
declare module '../core/app' {
  interface AppState {
    dmRules: { rules: DmRules }
  }
}
export function installDmRules(rules: DmRules): void {
  held().rules = rules
}

/** What the message code needs of a channel it may touch: a guild's (with the member) or a DM (its recipients). */
export type MessageAccess = {
  channel: ChannelRow
  permissions: bigint
  member?: MemberRow
  recipients?: Recipients
}

/** A DM the user is a recipient of, else 404 10003; `needed` beyond DM_PERMISSIONS: 403 50013. */
export async function dmAccess(channel: ChannelRow, userId: string, needed: bigint): Promise<MessageAccess> {
  const pair = await cachedDmRecipients(channel.id)
  if (!pair || (pair.lowUserId !== userId && pair.highUserId !== userId)) throw Errors.unknownChannel()
  if ((DM_PERMISSIONS & needed) !== needed) throw Errors.missingPermissions()
  return { channel, permissions: DM_PERMISSIONS, recipients: [pair.lowUserId, pair.highUserId] }
}

/** The recipient a sender writes to; 403 50007 when the rules refuse (a block either way). */
export async function checkDmSend(recipients: Recipients, senderId: string): Promise<void> {
  const other = recipients[0] === senderId ? recipients[1] : recipients[0]
  if (!(await held().rules.maySend(senderId, other))) throw cannotMessageUser()
}

/** An event of a channel: to its viewers' topic, or, for a DM, to both recipients' sessions that see DMs. */
export function announce(target: { channel: ChannelRow; recipients?: Recipients }, type: string, data: unknown): void {
  if (!target.recipients) return events.publish(topics.channel(target.channel.id), type, data)
  for (const userId of new Set(target.recipients)) events.publishToUser(userId, audiences.directMessages, type, data)
}

/** Discord's DM channel object as `viewerId` sees it: the other recipient in `recipients`. */
export async function dmChannelObject(channel: ChannelRow, recipients: Recipients, viewerId: string) {
  const other = recipients[0] === viewerId ? recipients[1] : recipients[0]
  const user = await cachedUser(other)
  return dmObject(channel, user ? [publicUser(user)] : [])
}

function dmObject(channel: ChannelRow, recipients: ReturnType<typeof publicUser>[]) {
  return { id: channel.id, type: ChannelType.DM, last_message_id: channel.lastMessageId, flags: 0, recipients }
}

/**
 * The DM channel of two users, made when they have none: one per pair, whatever runs at once (the pair's unique
 * index; on PostgreSQL a transaction that lost the race drops the channel it wrote and takes the winner's).
 */
export async function openDmChannel(a: string, b: string): Promise<{ channel: ChannelRow; created: boolean }> {
  const [low, high] = BigInt(a) < BigInt(b) ? [a, b] : [b, a]
  return await transaction(async (tx) => {
    const found = await dmChannelOfPair(tx, low, high)
    if (found) return { channel: found, created: false }
    const channel = await insertChannel(tx, {
      id: snowflake(),
      guildId: null,
      type: ChannelType.DM,
      name: '',
      createdAt: clock.now(),
    })
    if (await insertDmPair(tx, { channelId: channel.id, lowUserId: low, highUserId: high }))
      return { channel, created: true }
    await deleteChannelRow(tx, channel.id)
    return { channel: (await dmChannelOfPair(tx, low, high))!, created: false }
  })
}

/** GET /users/@me/channels: the user's DM channels, the latest active first, each with its other recipient. */
export async function dmChannelsOf(userId: string) {
  const rows = await dmChannelsOfUser(userId)
  const others = rows.map(({ pair }) => (pair.lowUserId === userId ? pair.highUserId : pair.lowUserId))
  const users = await findUsers(others)
  return rows.map(({ channel }, i) => {
    const user = users.get(others[i]!)
    return dmObject(channel, user ? [publicUser(user)] : [])
  })
}

/** CHANNEL_CREATE of a DM to one recipient's sessions (it opened the DM, or its first message arrived). */
export async function announceDmChannel(channel: ChannelRow, recipients: Recipients, toUserId: string): Promise<void> {
  events.publishToUser(
    toUserId,
    audiences.directMessages,
    'CHANNEL_CREATE',
    await dmChannelObject(channel, recipients, toUserId),
  )
}
