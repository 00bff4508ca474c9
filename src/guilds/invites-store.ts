// The guilds domain's queries of its invites (store.ts holds the domain's guilds and what its store files share: the
// tables `t`, the caches).
import { and, asc, eq, sql } from 'drizzle-orm'
import { type DB, db, write } from '../db/client'
import { t } from './store'
import type { InviteRow } from './tables'

export async function getInvite(code: string): Promise<InviteRow | undefined> {
  return db().select().from(t.invites).where(eq(t.invites.code, code)).get()
}

/** Count one use if the invite is still valid for this user; atomic, so parallel joins never exceed max_uses. */
export async function claimInviteUse(code: string, now: number, userId: string): Promise<InviteRow | undefined> {
  return await write((w) => {
    return w
      .update(t.invites)
      .set({ uses: sql`${t.invites.uses} + 1` })
      .where(
        and(
          eq(t.invites.code, code),
          sql`(${t.invites.maxUses} = 0 OR ${t.invites.uses} < ${t.invites.maxUses})`,
          sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
          sql`(${t.invites.targetUserId} IS NULL OR ${t.invites.targetUserId} = ${userId})`,
        ),
      )
      .returning()
      .get()
  })
}

export async function reusableInvite(
  channelId: string,
  inviterId: string,
  maxAge: number,
  maxUses: number,
  temporary: boolean,
  now: number,
): Promise<InviteRow | undefined> {
  return db()
    .select()
    .from(t.invites)
    .where(
      and(
        eq(t.invites.channelId, channelId),
        eq(t.invites.inviterId, inviterId),
        eq(t.invites.maxAge, maxAge),
        eq(t.invites.maxUses, maxUses),
        eq(t.invites.temporary, temporary),
        eq(t.invites.uses, 0),
        sql`${t.invites.targetUserId} IS NULL`,
        sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
      ),
    )
    .get()
}

/** The invites of a guild or of one channel still usable at `now` (not expired, uses left), oldest first. */
export async function liveInvites(
  where: { guildId: string } | { channelId: string },
  now: number,
): Promise<InviteRow[]> {
  return db()
    .select()
    .from(t.invites)
    .where(
      and(
        'guildId' in where ? eq(t.invites.guildId, where.guildId) : eq(t.invites.channelId, where.channelId),
        sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
        sql`(${t.invites.maxUses} = 0 OR ${t.invites.uses} < ${t.invites.maxUses})`,
      ),
    )
    .orderBy(asc(t.invites.createdAt), asc(t.invites.code))
    .all()
}

export async function insertInvite(tx: DB, row: typeof t.invites.$inferInsert): Promise<InviteRow> {
  return tx.insert(t.invites).values(row).returning().get()
}

export async function deleteInviteRow(tx: DB, code: string): Promise<void> {
  await tx.delete(t.invites).where(eq(t.invites.code, code)).run()
}
