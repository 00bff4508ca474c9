// The queries of game relationships and game invites (store.ts holds the relationships' rows and the tables `t`). The
// writers run inside the caller's transaction (game.ts, invites.ts), after it locked both users.
import { and, count, eq, gt, lte, or } from 'drizzle-orm'
import { type DB, db, write } from '../db/client'
import { t } from './store'
import type { GameInviteRow, GameRelationshipRow } from './tables'

const gr = () => t.gameRelationships

/** A user's game relationships: of one application, or of every one. */
export async function gameRelationshipsOf(userId: string, applicationId?: string): Promise<GameRelationshipRow[]> {
  const mine = eq(gr().userId, userId)
  return await db()
    .select()
    .from(gr())
    .where(applicationId ? and(mine, eq(gr().applicationId, applicationId)) : mine)
    .all()
}

/** What `userId` has with `otherId` in the application's game, if anything. */
export async function gameRelationshipBetween(
  userId: string,
  otherId: string,
  applicationId: string,
): Promise<GameRelationshipRow | undefined> {
  return await db()
    .select()
    .from(gr())
    .where(and(eq(gr().userId, userId), eq(gr().otherId, otherId), eq(gr().applicationId, applicationId)))
    .get()
}

/** Every game relationship of the pair, both sides, in every application (a block ends them). */
export async function gameRelationshipsOfPair(a: string, b: string): Promise<GameRelationshipRow[]> {
  return await db()
    .select()
    .from(gr())
    .where(or(and(eq(gr().userId, a), eq(gr().otherId, b)), and(eq(gr().userId, b), eq(gr().otherId, a))))
    .all()
}

export async function countGameRelationships(userId: string, applicationId: string, type: number): Promise<number> {
  const row = await db()
    .select({ n: count() })
    .from(gr())
    .where(and(eq(gr().userId, userId), eq(gr().applicationId, applicationId), eq(gr().type, type)))
    .get()
  return row?.n ?? 0
}

export async function putGameRelationship(tx: DB, row: GameRelationshipRow): Promise<void> {
  await tx
    .insert(gr())
    .values(row)
    .onConflictDoUpdate({
      target: [gr().userId, gr().applicationId, gr().otherId],
      set: { type: row.type, since: row.since },
    })
    .run()
}

export async function deleteGameRelationship(tx: DB, row: GameRelationshipRow): Promise<void> {
  await tx
    .delete(gr())
    .where(and(eq(gr().userId, row.userId), eq(gr().otherId, row.otherId), eq(gr().applicationId, row.applicationId)))
    .run()
}

const gi = () => t.gameInvites

export async function insertGameInvite(tx: DB, row: GameInviteRow): Promise<void> {
  await tx.insert(gi()).values(row).run()
}

export async function gameInvite(id: string): Promise<GameInviteRow | undefined> {
  return await db().select().from(gi()).where(eq(gi().id, id)).get()
}

/** The invites a user sent or received that have not expired (of one application, if given). */
export async function liveGameInvitesOf(userId: string, now: number, applicationId?: string): Promise<GameInviteRow[]> {
  const mine = and(or(eq(gi().senderId, userId), eq(gi().recipientId, userId)), gt(gi().expiresAt, now))
  return await db()
    .select()
    .from(gi())
    .where(applicationId ? and(mine, eq(gi().applicationId, applicationId)) : mine)
    .all()
}

export async function deleteGameInvite(tx: DB, id: string): Promise<void> {
  await tx.delete(gi()).where(eq(gi().id, id)).run()
}

/** Expired invites of this sender go when it sends another (nobody sees them any more). */
export async function deleteExpiredInvitesOf(tx: DB, senderId: string, now: number): Promise<void> {
  await tx
    .delete(gi())
    .where(and(eq(gi().senderId, senderId), lte(gi().expiresAt, now)))
    .run()
}

/** The pair's invites, either way, in every application (a block ends them). */
export async function gameInvitesOfPair(a: string, b: string): Promise<GameInviteRow[]> {
  return await db()
    .select()
    .from(gi())
    .where(or(and(eq(gi().senderId, a), eq(gi().recipientId, b)), and(eq(gi().senderId, b), eq(gi().recipientId, a))))
    .all()
}

/** The housekeeping sweep: invites past their ttl (nobody sees them any more). */
export async function deleteExpiredInvites(now: number): Promise<void> {
  await write((w) => w.delete(gi()).where(lte(gi().expiresAt, now)).run())
}

/** An application deleted (provisional/app-delete.ts): its game relationships and invites go with it. */
export async function deleteGameDataOfApplication(applicationId: string): Promise<void> {
  await write(async (w) => {
    await w.delete(gr()).where(eq(gr().applicationId, applicationId)).run()
    await w.delete(gi()).where(eq(gi().applicationId, applicationId)).run()
  })
}
