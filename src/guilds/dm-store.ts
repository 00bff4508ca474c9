// DM channels' rows (issue 45): a channel without a guild (type 1) and its dm_channels row, the pair of recipients.
import { and, desc, eq, or, sql } from 'drizzle-orm'
import { rowCache } from '../db/cache'
import { asInteger, type DB, prepared } from '../db/client'
import { t } from './store'
import type { ChannelRow, DmChannelRow } from './tables'

const ph = sql.placeholder

// A DM's pair never changes (the row goes only with its channel or a user): read once per channel.
const dmRows = rowCache<string, DmChannelRow>('dm-channels', 8192)

const dmStmt = prepared((d) =>
  d
    .select()
    .from(t.dmChannels)
    .where(eq(t.dmChannels.channelId, ph('id')))
    .prepare(),
)

/** The recipients of a DM channel (cached: the pair never changes); undefined for any other channel. */
export async function cachedDmRecipients(channelId: string): Promise<DmChannelRow | undefined> {
  return dmRows.read(channelId, () => dmStmt().get({ id: channelId }))
}

/** The DM channel of two users (`low` < `high`), if they have one. */
export async function dmChannelOfPair(tx: DB, low: string, high: string): Promise<ChannelRow | undefined> {
  const found = await tx
    .select({ channel: t.channels })
    .from(t.dmChannels)
    .innerJoin(t.channels, eq(t.channels.id, t.dmChannels.channelId))
    .where(and(eq(t.dmChannels.lowUserId, low), eq(t.dmChannels.highUserId, high)))
    .get()
  return found?.channel
}

/**
 * Write the pair of a new DM channel (its channel row written first); false when another transaction wrote the
 * pair's row first (PostgreSQL: it waited on the unique index until that one committed).
 */
export async function insertDmPair(tx: DB, row: DmChannelRow): Promise<boolean> {
  return (await tx.insert(t.dmChannels).values(row).onConflictDoNothing().returning().get()) !== undefined
}

/** A user's DM channels with the other recipient of each, the newest message (else the newest channel) first. */
export async function dmChannelsOfUser(userId: string): Promise<{ channel: ChannelRow; pair: DmChannelRow }[]> {
  return await dmsOf().all({ userId })
}

const dmsOf = prepared((d) =>
  d
    .select({ channel: t.channels, pair: t.dmChannels })
    .from(t.dmChannels)
    .innerJoin(t.channels, eq(t.channels.id, t.dmChannels.channelId))
    .where(or(eq(t.dmChannels.lowUserId, ph('userId')), eq(t.dmChannels.highUserId, ph('userId'))))
    .orderBy(desc(asInteger(sql`coalesce(${t.channels.lastMessageId}, ${t.channels.id})`)))
    .prepare(),
)
