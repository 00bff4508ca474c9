// The lobbies domain's queries of the event webhooks' outbox (event-webhooks.ts sends what it holds; store.ts holds
// the domain's lobby rows and what its store files share: the tables `t`, the caches).
import { and, count, eq, getTableColumns, inArray, isNotNull, isNull, lte, notInArray, or, sql } from 'drizzle-orm'
import { type DB, db, write } from '../db/client'
import { forgetLobby, t } from './store'
import type { LobbyEventDeliveryRow } from './tables'

/** Queue an event for the application's webhooks, in the transaction that made it. */
export async function enqueueEventDelivery(
  tx: DB,
  row: { lobbyId: string; applicationId: string; body: string; now: number },
): Promise<void> {
  await tx
    .insert(t.lobbyEventDeliveries)
    .values({
      lobbyId: row.lobbyId,
      applicationId: row.applicationId,
      body: row.body,
      nextAttemptAt: row.now,
      createdAt: row.now,
    })
    .run()
}

/** Not claimed by a node, or its claim ran out (that node died or stalled). */
const unclaimed = (now: number) =>
  or(isNull(t.lobbyEventDeliveries.claimedUntil), lte(t.lobbyEventDeliveries.claimedUntil, now))

/**
 * The oldest undelivered event of each lobby, when its next attempt is due and no node holds it: what may be sent
 * now, in order. Each application's in turn: every application's oldest due head first (by id), then every one's
 * second, and so on, so one application's backlog never hides another's event. `skipApps`: applications left out
 * (this node already sends as many of theirs as it may).
 */
export async function dueEventDeliveries(
  now: number,
  limit: number,
  skipApps: string[] = [],
): Promise<LobbyEventDeliveryRow[]> {
  const d = t.lobbyEventDeliveries
  const heads = db()
    .select({ id: sql<number>`min(${d.id})`.as('head') })
    .from(d)
    .groupBy(d.lobbyId)
    .as('heads')
  const ranked = db()
    .select({
      ...getTableColumns(d),
      turn: sql<number>`row_number() over (partition by ${d.applicationId} order by ${d.id})`.as('turn'),
    })
    .from(d)
    .innerJoin(heads, eq(heads.id, d.id))
    .where(
      and(
        lte(d.nextAttemptAt, now),
        unclaimed(now),
        skipApps.length > 0 ? notInArray(d.applicationId, skipApps) : undefined,
      ),
    )
    .as('ranked')
  const rows = await db().select().from(ranked).orderBy(sql`turn`, ranked.id).limit(limit).all()
  return rows.map(({ turn: _, ...row }) => row as LobbyEventDeliveryRow)
}

/**
 * Claim rows for `owner` until `until`: only those still due and unclaimed (on PostgreSQL the UPDATE checks that
 * again on a row another node claimed meanwhile, after its COMMIT), so each row goes to one node. The rows claimed.
 */
export async function claimEventDeliveries(
  ids: number[],
  owner: string,
  now: number,
  until: number,
): Promise<LobbyEventDeliveryRow[]> {
  if (ids.length === 0) return []
  const d = t.lobbyEventDeliveries
  return await write(async (w) => {
    return await w
      .update(d)
      .set({ claimedBy: owner, claimedUntil: until })
      .where(and(inArray(d.id, ids), lte(d.nextAttemptAt, now), unclaimed(now)))
      .returning()
      .all()
  })
}

/** Rows whose endpoint is failing wait until `until` (no attempt counted), unless a node holds them. */
export async function parkEventDeliveries(ids: number[], until: number, now: number): Promise<void> {
  if (ids.length === 0) return
  const d = t.lobbyEventDeliveries
  return await write(async (w) => {
    await w
      .update(d)
      .set({ nextAttemptAt: until })
      .where(and(inArray(d.id, ids), unclaimed(now)))
      .run()
  })
}

/** Every claim let go (one node alone on its database, at start: what a killed process held is due again). */
export async function releaseEventDeliveryClaims(): Promise<void> {
  const d = t.lobbyEventDeliveries
  return await write(async (w) => {
    await w.update(d).set({ claimedBy: null, claimedUntil: null }).where(isNotNull(d.claimedBy)).run()
  })
}

export async function deleteEventDelivery(id: number): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.lobbyEventDeliveries).where(eq(t.lobbyEventDeliveries.id, id)).run()
  })
}

/** An attempt failed: the next one at `nextAttemptAt`, the claim let go; failing since `now` unless already. */
export async function failEventDelivery(
  id: number,
  owner: string,
  row: { attempts: number; nextAttemptAt: number; error: string; now: number },
): Promise<void> {
  const d = t.lobbyEventDeliveries
  return await write(async (w) => {
    await w
      .update(d)
      .set({
        attempts: row.attempts,
        nextAttemptAt: row.nextAttemptAt,
        lastError: row.error,
        failingSince: sql`coalesce(${d.failingSince}, ${row.now})`,
        claimedBy: null,
        claimedUntil: null,
      })
      .where(and(eq(d.id, id), eq(d.claimedBy, owner)))
      .run()
  })
}

/**
 * The lobby's override URL failed too long (event-webhooks.ts, the stop rule): cleared, only if it still is `url`.
 * True when it changed.
 */
export async function clearFailingOverride(lobbyId: string, url: string): Promise<boolean> {
  return await write(async (w) => {
    forgetLobby(lobbyId)
    const changed = await w
      .update(t.lobbies)
      .set({ overrideEventWebhooksUrl: null })
      .where(and(eq(t.lobbies.id, lobbyId), eq(t.lobbies.overrideEventWebhooksUrl, url)))
      .returning({ id: t.lobbies.id })
      .all()
    return changed.length > 0
  })
}

/** Drop what a lobby still had queued when its events have nowhere to go (no override, no application URL). */
export async function dropLobbyEventDeliveries(lobbyId: string): Promise<number> {
  return await write(async (w) => {
    return (
      await w
        .delete(t.lobbyEventDeliveries)
        .where(eq(t.lobbyEventDeliveries.lobbyId, lobbyId))
        .returning({ id: t.lobbyEventDeliveries.id })
        .all()
    ).length
  })
}

/** The lobby's events now go elsewhere (its override changed): what is queued is due now, with a fresh backoff. */
export async function retargetEventDeliveries(tx: DB, lobbyId: string, now: number): Promise<void> {
  await tx
    .update(t.lobbyEventDeliveries)
    .set({ attempts: 0, nextAttemptAt: now, failingSince: null })
    .where(eq(t.lobbyEventDeliveries.lobbyId, lobbyId))
    .run()
}

export async function countEventDeliveries(): Promise<number> {
  return (await db().select({ n: count() }).from(t.lobbyEventDeliveries).get())?.n ?? 0
}
