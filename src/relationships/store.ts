// Every query of relationships. Async, as every store (docs/DESIGN.md, "Stores are async"). The writers run inside the
// caller's transaction (relationships.ts), after it locked both users.
import { and, count, eq, or, sql } from 'drizzle-orm'
import { type DB, prepared } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { RelationshipRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
export const t = dialectTables(sqliteTables)
const ph = sql.placeholder

const rowsOf = prepared((d) =>
  d
    .select()
    .from(t.relationships)
    .where(eq(t.relationships.userId, ph('userId')))
    .prepare(),
)

/** Every relationship of a user, in no particular order (the callers sort). */
export async function relationshipsOf(userId: string): Promise<RelationshipRow[]> {
  return await rowsOf().all({ userId })
}

const rowBetween = prepared((d) =>
  d
    .select()
    .from(t.relationships)
    .where(and(eq(t.relationships.userId, ph('userId')), eq(t.relationships.otherId, ph('otherId'))))
    .prepare(),
)

/** What `userId` has with `otherId`, if anything. */
export async function relationshipBetween(userId: string, otherId: string): Promise<RelationshipRow | undefined> {
  return await rowBetween().get({ userId, otherId })
}

const countOfType = prepared((d) =>
  d
    .select({ n: count() })
    .from(t.relationships)
    .where(and(eq(t.relationships.userId, ph('userId')), eq(t.relationships.type, ph('type'))))
    .prepare(),
)

/** How many relationships of this type a user has (friends, pending outgoing requests). */
export async function countRelationships(userId: string, type: number): Promise<number> {
  return (await countOfType().get({ userId, type }))?.n ?? 0
}

/** Write what `row.userId` has with `row.otherId` (a new row or a new type; the nickname goes with a friendship). */
export async function putRelationship(tx: DB, row: RelationshipRow): Promise<void> {
  await tx
    .insert(t.relationships)
    .values(row)
    .onConflictDoUpdate({
      target: [t.relationships.userId, t.relationships.otherId],
      set: { type: row.type, nickname: row.nickname, since: row.since },
    })
    .run()
}

export async function setNickname(tx: DB, userId: string, otherId: string, nickname: string | null): Promise<void> {
  await tx
    .update(t.relationships)
    .set({ nickname })
    .where(and(eq(t.relationships.userId, userId), eq(t.relationships.otherId, otherId)))
    .run()
}

export async function deleteRelationship(tx: DB, userId: string, otherId: string): Promise<void> {
  await tx
    .delete(t.relationships)
    .where(and(eq(t.relationships.userId, userId), eq(t.relationships.otherId, otherId)))
    .run()
}

/** Whether either user blocked the other (DMs, presence, invites ask this). */
export async function blockedEitherWay(a: string, b: string): Promise<boolean> {
  const [ab, ba] = [await relationshipBetween(a, b), await relationshipBetween(b, a)]
  return ab?.type === 2 || ba?.type === 2
}

const blocksWith = prepared((d) =>
  d
    .select({ userId: t.relationships.userId, otherId: t.relationships.otherId })
    .from(t.relationships)
    .where(
      and(
        eq(t.relationships.type, 2),
        or(eq(t.relationships.userId, ph('userId')), eq(t.relationships.otherId, ph('userId'))),
      ),
    )
    .prepare(),
)

/** The users `userId` blocked or is blocked by (presence to lobby-mates leaves them out). */
export async function blockedWith(userId: string): Promise<Set<string>> {
  const rows = await blocksWith().all({ userId })
  return new Set(rows.map((r) => (r.userId === userId ? r.otherId : r.userId)))
}
