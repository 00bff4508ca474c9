// The guilds domain's queries of the channels' messages: pages, posting, edits, deletions and pins (store.ts holds the
// guilds, channels, roles and members, and what the domain's store files share: the tables `t`, the caches).
import { and, asc, count, desc, eq, gt, inArray, isNotNull, lt, lte, type SQL, sql } from 'drizzle-orm'
import { usersVersion } from '../accounts/store'
import { asInteger, type DB, db, lockForUpdate, lockName, prepared } from '../db/client'
import { type ColumnOf, insertColumns } from '../db/insert-columns'
import { channelRows, messagePages, t } from './store'
import { type MessageRow, NO_MENTIONS } from './tables'

const ph = sql.placeholder

// A page of channel messages: newest first; after a cursor alone, the oldest ones newer than it, read ascending.
const messageOrder = asInteger(t.messages.id)
const inChannel = eq(t.messages.channelId, ph('channelId'))
const messagePage = (where: SQL | undefined, order: SQL) =>
  prepared((d) => d.select().from(t.messages).where(where).orderBy(order).limit(ph('limit')).prepare())
const pageNewest = messagePage(inChannel, desc(messageOrder))
const pageBefore = messagePage(and(inChannel, lt(messageOrder, asInteger(ph('before')))), desc(messageOrder))
const pageAfter = messagePage(and(inChannel, gt(messageOrder, asInteger(ph('after')))), asc(messageOrder))
const pageAtOrBefore = messagePage(and(inChannel, lte(messageOrder, asInteger(ph('around')))), desc(messageOrder))

/** The channel's page for this query as JSON text: cached, else `build()`'s. Read inside the request's snapshot. */
export async function cachedMessagePage(
  channelId: string,
  query: string,
  build: () => Promise<string>,
): Promise<string> {
  return messagePages.read(channelId, query, usersVersion(), build)
}

/** Newest first. `before`/`after` exclusive; `around` splits the limit on both sides. */
export async function channelMessages(
  channelId: string,
  q: { limit: number; before?: string; after?: string; around?: string },
): Promise<MessageRow[]> {
  if (q.around) {
    const half = Math.floor(q.limit / 2)
    const older = await pageAtOrBefore().all({ channelId, around: q.around, limit: q.limit - half })
    const newer = await pageAfter().all({ channelId, after: q.around, limit: half })
    return [...newer.reverse(), ...older]
  }
  if (q.after && !q.before) return (await pageAfter().all({ channelId, after: q.after, limit: q.limit })).reverse()
  if (q.before) return pageBefore().all({ channelId, before: q.before, limit: q.limit })
  return pageNewest().all({ channelId, limit: q.limit })
}

const recentNonce = prepared((d) =>
  d
    .select()
    .from(t.messages)
    .where(
      and(
        eq(t.messages.channelId, ph('channelId')),
        eq(t.messages.authorId, ph('authorId')),
        eq(t.messages.nonce, ph('nonce')),
        gt(t.messages.createdAt, ph('since')),
      ),
    )
    .prepare(),
)
// A new message's columns: the statement's placeholders and the values that fill them are made from them.
const messageColumns = insertColumns(
  ['id', 'channelId', 'authorId', 'content', 'nonce', 'createdAt', 'embeds', 'referenceId', 'mentions'],
  { json: ['embeds', 'mentions'], fallbacks: { embeds: [], mentions: NO_MENTIONS } },
)
const messageInsert = prepared((d) => d.insert(t.messages).values(messageColumns.values()).returning().prepare())
const lastMessageSet = prepared((d) =>
  d
    .update(t.channels)
    .set({ lastMessageId: sql`${ph('lastMessageId')}` })
    .where(eq(t.channels.id, ph('id')))
    .prepare(),
)

/** The author's message with this nonce in the channel since `since` (enforce_nonce). */
export async function recentMessageWithNonce(
  channelId: string,
  authorId: string,
  nonce: string,
  since: number,
): Promise<MessageRow | undefined> {
  return recentNonce().get({ channelId, authorId, nonce, since })
}

export type MessageInsert = Pick<typeof t.messages.$inferInsert, ColumnOf<typeof messageColumns>>

export async function insertMessage(row: MessageInsert): Promise<MessageRow> {
  messagePages.forget(row.channelId)
  return messageInsert().get(messageColumns.params(row))!
}

export async function findMessage(id: string): Promise<MessageRow | undefined> {
  return db().select().from(t.messages).where(eq(t.messages.id, id)).get()
}

/** A new message in the channel: its last_message_id. */
export async function setLastMessageId(channelId: string, messageId: string): Promise<void> {
  channelRows.forget(channelId)
  await lastMessageSet().run({ id: channelId, lastMessageId: messageId })
}

/** The ids of an author's messages in these channels made since `since` (ms), by channel. */
export async function authorMessagesSince(
  tx: DB,
  channelIds: string[],
  authorId: string,
  since: number,
): Promise<{ id: string; channelId: string }[]> {
  if (!channelIds.length) return []
  return tx
    .select({ id: t.messages.id, channelId: t.messages.channelId })
    .from(t.messages)
    .where(
      and(
        inArray(t.messages.channelId, channelIds),
        eq(t.messages.authorId, authorId),
        gt(t.messages.createdAt, since),
      ),
    )
    .all()
}

// ---- one message: edits, deletions, pins (reactions-store.ts its reactions). Each writer forgets the channel's pages.

/** The message if it is in this channel. */
export async function messageInChannel(channelId: string, id: string, tx: DB = db()): Promise<MessageRow | undefined> {
  return tx
    .select()
    .from(t.messages)
    .where(and(eq(t.messages.id, id), eq(t.messages.channelId, channelId)))
    .get()
}

/** Those of these messages that are in this channel. */
export async function messagesInChannel(channelId: string, ids: string[], tx: DB = db()): Promise<MessageRow[]> {
  return tx
    .select()
    .from(t.messages)
    .where(and(eq(t.messages.channelId, channelId), inArray(t.messages.id, ids)))
    .all()
}

export type MessagePatch = Partial<Pick<MessageRow, 'content' | 'embeds' | 'mentions' | 'editedAt' | 'pinnedAt'>>

/** Change a message of this channel; undefined when it is not there (deleted meanwhile). */
export async function updateMessageRow(
  tx: DB,
  channelId: string,
  id: string,
  patch: MessagePatch,
): Promise<MessageRow | undefined> {
  messagePages.forget(channelId)
  return tx
    .update(t.messages)
    .set(patch)
    .where(and(eq(t.messages.id, id), eq(t.messages.channelId, channelId)))
    .returning()
    .get()
}

/** Delete these messages of the channel (their reactions go with them); the ids that were there. */
export async function deleteMessageRows(tx: DB, channelId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  messagePages.forget(channelId)
  return (
    await tx
      .delete(t.messages)
      .where(and(eq(t.messages.channelId, channelId), inArray(t.messages.id, ids)))
      .returning({ id: t.messages.id })
      .all()
  ).map((r) => r.id)
}

const isPinned = (channelId: string) => and(eq(t.messages.channelId, channelId), isNotNull(t.messages.pinnedAt))

/** The channel's pinned messages, the latest pinned first. */
export async function pinnedMessages(channelId: string): Promise<MessageRow[]> {
  return db().select().from(t.messages).where(isPinned(channelId)).orderBy(desc(t.messages.pinnedAt)).all()
}

export async function pinCount(channelId: string, tx: DB = db()): Promise<number> {
  return (await tx.select({ n: count() }).from(t.messages).where(isPinned(channelId)).get())?.n ?? 0
}

/** When the channel's latest pin was made (CHANNEL_PINS_UPDATE's last_pin_timestamp); null without pins. */
export async function lastPinAt(channelId: string, tx: DB = db()): Promise<number | null> {
  return (
    (
      await tx
        .select({ at: sql<number | null>`max(${t.messages.pinnedAt})` })
        .from(t.messages)
        .where(isPinned(channelId))
        .get()
    )?.at ?? null
  )
}

// ---- Locks for count-then-write checks (db/client.ts lockForUpdate, lockName; nothing on SQLite)

/** Hold the message's row until the transaction ends (its count of reaction emoji is checked alone). */
export async function lockMessage(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.messages, t.messages.id, id)
}

/** One enforce_nonce send per channel, author and nonce at a time (the message it finds may not exist yet). */
export async function lockMessageNonce(tx: DB, channelId: string, authorId: string, nonce: string): Promise<void> {
  await lockName(tx, `message-nonce:${channelId}:${authorId}:${nonce}`)
}
