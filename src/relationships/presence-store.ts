// The queries of presences (store.ts holds the relationships' rows and the tables `t`).
import { eq, inArray } from 'drizzle-orm'
import { db, write } from '../db/client'
import { t } from './store'
import type { PresenceRow } from './tables'

/** Write a user's presence (a new row or its new status and activities). */
export async function putPresence(row: PresenceRow): Promise<void> {
  await write((w) =>
    w
      .insert(t.presences)
      .values(row)
      .onConflictDoUpdate({
        target: t.presences.userId,
        set: { status: row.status, activities: row.activities, updatedAt: row.updatedAt },
      })
      .run(),
  )
}

/** A user's presence row, if any. */
export async function presenceOf(userId: string): Promise<PresenceRow | undefined> {
  return await db().select().from(t.presences).where(eq(t.presences.userId, userId)).get()
}

/** The presence rows of these users. */
export async function presencesOf(userIds: string[]): Promise<PresenceRow[]> {
  if (userIds.length === 0) return []
  const out: PresenceRow[] = []
  for (let i = 0; i < userIds.length; i += 500)
    out.push(
      ...(await db()
        .select()
        .from(t.presences)
        .where(inArray(t.presences.userId, userIds.slice(i, i + 500)))
        .all()),
    )
  return out
}

export async function deletePresence(userId: string): Promise<void> {
  await write((w) => w.delete(t.presences).where(eq(t.presences.userId, userId)).run())
}
