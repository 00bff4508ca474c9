// The guilds domain's queries of the messages' reactions (store.ts holds the domain's guilds and what its store files
// share: the tables `t`, the caches). Each writer forgets the channel's pages.
import { and, count, countDistinct, eq, gt, sql } from 'drizzle-orm'
import { asInteger, type DB, db, idsTable, idValue, prepared } from '../db/client'
import { messagePages, t } from './store'

const ph = sql.placeholder

export type ReactionCount = { emoji: string; count: number; me: boolean }

// Per message and emoji: how many, whether the reader is among them, in the order each emoji was first used.
const reactionCountsOf = prepared((d) =>
  d
    .select({
      messageId: t.reactions.messageId,
      emoji: t.reactions.emoji,
      count: count(),
      me: sql<number | null>`max(CASE WHEN ${t.reactions.userId} = ${ph('userId')} THEN 1 ELSE 0 END)`,
    })
    .from(idsTable())
    .crossJoin(t.reactions)
    .where(eq(t.reactions.messageId, idValue))
    .groupBy(t.reactions.messageId, t.reactions.emoji)
    .orderBy(sql`min(${t.reactions.createdAt})`, t.reactions.emoji)
    .prepare(),
)

/** The reactions on these messages as the reader sees them (`me`; null: nobody's), in one query. */
export async function reactionCounts(
  messageIds: string[],
  readerId: string | null,
): Promise<Map<string, ReactionCount[]>> {
  const out = new Map<string, ReactionCount[]>()
  if (!messageIds.length) return out
  for (const r of await reactionCountsOf().all({ ids: JSON.stringify(messageIds), userId: readerId })) {
    const item = { emoji: r.emoji, count: r.count, me: r.me === 1 }
    const list = out.get(r.messageId)
    if (list) list.push(item)
    else out.set(r.messageId, [item])
  }
  return out
}

/** The emoji on a message (at most 20 differ), and whether this one is among them. */
export async function messageEmoji(
  messageId: string,
  emoji: string,
  tx: DB = db(),
): Promise<{ kinds: number; has: boolean }> {
  const row = await tx
    .select({
      kinds: countDistinct(t.reactions.emoji),
      has: sql<number>`coalesce(max(CASE WHEN ${t.reactions.emoji} = ${emoji} THEN 1 ELSE 0 END), 0)`,
    })
    .from(t.reactions)
    .where(eq(t.reactions.messageId, messageId))
    .get()
  return { kinds: row?.kinds ?? 0, has: row?.has === 1 }
}

/** A user's reaction; false when it was already there. */
export async function insertReaction(
  tx: DB,
  channelId: string,
  row: typeof t.reactions.$inferInsert,
): Promise<boolean> {
  messagePages.forget(channelId)
  return (
    (await tx.insert(t.reactions).values(row).onConflictDoNothing().returning({ at: t.reactions.createdAt }).all())
      .length > 0
  )
}

/** Remove one user's reaction; false when there was none. */
export async function deleteReaction(
  tx: DB,
  channelId: string,
  messageId: string,
  emoji: string,
  userId: string,
): Promise<boolean> {
  messagePages.forget(channelId)
  return (
    (
      await tx
        .delete(t.reactions)
        .where(and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji), eq(t.reactions.userId, userId)))
        .returning({ at: t.reactions.createdAt })
        .all()
    ).length > 0
  )
}

/** Remove every reaction on a message, or every one of an emoji; how many there were. */
export async function deleteReactions(tx: DB, channelId: string, messageId: string, emoji?: string): Promise<number> {
  messagePages.forget(channelId)
  const where = emoji
    ? and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji))
    : eq(t.reactions.messageId, messageId)
  return (await tx.delete(t.reactions).where(where).returning({ at: t.reactions.createdAt }).all()).length
}

/** The ids of the users who reacted with an emoji, by id, after a user id. */
export async function reactionUserIds(
  messageId: string,
  emoji: string,
  after: string,
  limit: number,
): Promise<string[]> {
  const byId = asInteger(t.reactions.userId)
  return (
    await db()
      .select({ userId: t.reactions.userId })
      .from(t.reactions)
      .where(and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji), gt(byId, asInteger(after))))
      .orderBy(byId)
      .limit(limit)
      .all()
  ).map((r) => r.userId)
}
