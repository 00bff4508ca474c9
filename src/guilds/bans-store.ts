// The guilds domain's queries of its bans (store.ts holds the domain's guilds and what its store files share: the
// tables `t`, the caches).
import { and, asc, desc, eq, gt, lt } from 'drizzle-orm'
import { asInteger, type DB, db } from '../db/client'
import { t } from './store'
import type { BanRow } from './tables'

/** Ban a user; false when the ban was already there (it keeps its reason). */
export async function insertBan(tx: DB, row: typeof t.bans.$inferInsert): Promise<boolean> {
  return (await tx.insert(t.bans).values(row).onConflictDoNothing().returning().get()) !== undefined
}

/** Lift a ban; false when there was none. */
export async function deleteBan(tx: DB, guildId: string, userId: string): Promise<boolean> {
  return (
    (await tx
      .delete(t.bans)
      .where(and(eq(t.bans.guildId, guildId), eq(t.bans.userId, userId)))
      .returning()
      .get()) !== undefined
  )
}

export async function findBan(guildId: string, userId: string): Promise<BanRow | undefined> {
  return db()
    .select()
    .from(t.bans)
    .where(and(eq(t.bans.guildId, guildId), eq(t.bans.userId, userId)))
    .get()
}

/** A page of the guild's bans in user id order, after or before a user id. */
export async function guildBans(
  guildId: string,
  page: { limit: number; before?: string; after?: string },
): Promise<BanRow[]> {
  const userNumber = asInteger(t.bans.userId)
  const rows = await db()
    .select()
    .from(t.bans)
    .where(
      and(
        eq(t.bans.guildId, guildId),
        page.after !== undefined ? gt(userNumber, asInteger(page.after)) : undefined,
        page.before !== undefined ? lt(userNumber, asInteger(page.before)) : undefined,
      ),
    )
    .orderBy(page.before !== undefined && page.after === undefined ? desc(userNumber) : asc(userNumber))
    .limit(page.limit)
    .all()
  return page.before !== undefined && page.after === undefined ? rows.reverse() : rows
}
