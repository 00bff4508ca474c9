// The lobbies domain's queries for the operator console (admin/): an application's lobbies with their member counts,
// paged; the event webhooks' outbox rows of an application (its delivery log); the messages of the last hour by
// minute (the dashboard's sparkline).
import { and, count, desc, eq, gte, lt, sql } from 'drizzle-orm'
import { snowflakeAt } from '../core/snowflake'
import { asInteger } from '../db/dialect'
import { db } from '../db/client'
import { t } from './store'
import type { LobbyEventDeliveryRow } from './tables'

export type LobbyListRow = { id: string; createdAt: number; members: number; inCall: number; online: boolean }

/**
 * An application's lobbies, newest first, `limit` of them older than `before` (a lobby id): each with its member
 * count and how many are in its call. `online`: it has no idle deadline (a member has a live session, activity.ts).
 */
export async function lobbiesOfApplication(
  applicationId: string,
  page: { before?: string; limit: number },
): Promise<LobbyListRow[]> {
  const l = t.lobbies
  const m = t.lobbyMembers
  const rows = await db()
    .select({
      id: l.id,
      createdAt: l.createdAt,
      idleDeadline: l.idleDeadline,
      members: sql<number>`(SELECT count(*) FROM ${m} WHERE ${m.lobbyId} = ${l.id})`,
      inCall: sql<number>`(SELECT count(*) FROM ${m} WHERE ${m.lobbyId} = ${l.id} AND ${m.voiceSessionId} IS NOT NULL)`,
    })
    .from(l)
    .where(
      and(
        eq(l.applicationId, applicationId),
        page.before !== undefined ? lt(asInteger(l.id), asInteger(page.before)) : undefined,
      ),
    )
    .orderBy(desc(asInteger(l.id)))
    .limit(page.limit)
    .all()
  return rows.map((r) => ({
    id: r.id,
    createdAt: r.createdAt,
    members: Number(r.members),
    inCall: Number(r.inCall),
    online: r.idleDeadline === null,
  }))
}

/** How many lobbies an application has. */
export async function countApplicationLobbies(applicationId: string): Promise<number> {
  return (await db().select({ n: count() }).from(t.lobbies).where(eq(t.lobbies.applicationId, applicationId)).get())
    ?.n as number
}

/** The application's undelivered events (the outbox deletes what was taken), oldest first. */
export async function eventDeliveriesOfApplication(
  applicationId: string,
  limit: number,
): Promise<LobbyEventDeliveryRow[]> {
  const d = t.lobbyEventDeliveries
  return await db().select().from(d).where(eq(d.applicationId, applicationId)).orderBy(d.id).limit(limit).all()
}

/** Lobby messages per minute since `since` (ms): [minute start (ms), count], by the ids' time (their index). */
export async function lobbyMessagesPerMinute(since: number): Promise<[number, number][]> {
  const msg = t.lobbyMessages
  const minute = sql<number>`(${msg.createdAt} / 60000)`
  const rows = await db()
    .select({ minute, n: count() })
    .from(msg)
    // Ids are snowflakes of the same length for any recent time: their text order is their time order.
    .where(gte(msg.id, snowflakeAt(since)))
    .groupBy(minute)
    .all()
  return rows.map((r) => [Number(r.minute) * 60_000, Number(r.n)])
}
