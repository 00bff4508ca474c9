// Every query of the remote-auth domain. Single use is one guarded UPDATE or DELETE ... RETURNING, so parallel
// requests find exactly one winner.
import { and, eq, gt, isNull, lte, sql } from 'drizzle-orm'
import { db, prepared, transaction, write, type DB } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { RemoteAuthDesktopRow, RemoteAuthTicketRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export async function insertDesktop(row: typeof t.remoteAuthDesktops.$inferInsert): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.remoteAuthDesktops).values(row).run()
  })
}

/** Whether a live desktop already holds this fingerprint. */
export async function fingerprintInUse(fingerprint: string, now: number): Promise<boolean> {
  return !!(await db()
    .select({ f: t.remoteAuthDesktops.fingerprint })
    .from(t.remoteAuthDesktops)
    .where(and(eq(t.remoteAuthDesktops.fingerprint, fingerprint), gt(t.remoteAuthDesktops.expiresAt, now)))
    .get())
}

export async function deleteDesktop(fingerprint: string): Promise<void> {
  return await write(async (w) => {
    await w.delete(t.remoteAuthDesktops).where(eq(t.remoteAuthDesktops.fingerprint, fingerprint)).run()
  })
}

/** At start: no socket survives a restart, so no desktop row is live. */
export async function deleteAllDesktops(): Promise<number> {
  return await write(async (w) => {
    return (await w.delete(t.remoteAuthDesktops).returning({ f: t.remoteAuthDesktops.fingerprint }).all()).length
  })
}

/** A mobile user takes a waiting desktop: only one ever does. */
export async function claimDesktop(
  fingerprint: string,
  userId: string,
  handshakeHash: string,
  now: number,
): Promise<RemoteAuthDesktopRow | undefined> {
  return await write((w) => {
    return w
      .update(t.remoteAuthDesktops)
      .set({ userId, handshakeHash, claimedAt: now })
      .where(
        and(
          eq(t.remoteAuthDesktops.fingerprint, fingerprint),
          isNull(t.remoteAuthDesktops.userId),
          gt(t.remoteAuthDesktops.expiresAt, now),
        ),
      )
      .returning()
      .get()
  })
}

const byHandshake = prepared((d) =>
  d
    .select()
    .from(t.remoteAuthDesktops)
    .where(
      and(
        eq(t.remoteAuthDesktops.handshakeHash, sql.placeholder('hash')),
        eq(t.remoteAuthDesktops.userId, sql.placeholder('userId')),
        gt(t.remoteAuthDesktops.expiresAt, sql.placeholder('now')),
      ),
    )
    .prepare(),
)

/** The live desktop this user's handshake token names, without using the token. */
export async function findHandshake(
  handshakeHash: string,
  userId: string,
  now: number,
): Promise<RemoteAuthDesktopRow | undefined> {
  return byHandshake().get({ hash: handshakeHash, userId, now })
}

async function takeHandshakeIn(
  tx: DB,
  handshakeHash: string,
  userId: string,
  now: number,
): Promise<RemoteAuthDesktopRow | undefined> {
  return tx
    .delete(t.remoteAuthDesktops)
    .where(
      and(
        eq(t.remoteAuthDesktops.handshakeHash, handshakeHash),
        eq(t.remoteAuthDesktops.userId, userId),
        gt(t.remoteAuthDesktops.expiresAt, now),
      ),
    )
    .returning()
    .get()
}

/** Use a handshake token (cancel): the desktop row goes with it. */
export async function takeHandshake(
  handshakeHash: string,
  userId: string,
  now: number,
): Promise<RemoteAuthDesktopRow | undefined> {
  return await write((w) => takeHandshakeIn(w, handshakeHash, userId, now))
}

/** Use a handshake token and leave a ticket in its place, in one transaction. */
export async function exchangeHandshakeForTicket(
  handshakeHash: string,
  userId: string,
  now: number,
  ticketHash: string,
  ticketTtlMs: number,
): Promise<RemoteAuthDesktopRow | undefined> {
  return await transaction(async (tx) => {
    const desktop = await takeHandshakeIn(tx, handshakeHash, userId, now)
    if (!desktop) return undefined
    await tx
      .insert(t.remoteAuthTickets)
      .values({
        ticketHash,
        userId,
        publicKey: desktop.publicKey,
        ip: desktop.ip,
        clientOs: desktop.clientOs,
        clientPlatform: desktop.clientPlatform,
        clientLocation: desktop.clientLocation,
        createdAt: now,
        expiresAt: now + ticketTtlMs,
      })
      .run()
    return desktop
  })
}

/** Redeem a ticket: returned once, then never again; undefined if unknown, used or expired. */
export async function takeTicket(ticketHash: string, now: number): Promise<RemoteAuthTicketRow | undefined> {
  return await write((w) => {
    return w
      .delete(t.remoteAuthTickets)
      .where(and(eq(t.remoteAuthTickets.ticketHash, ticketHash), gt(t.remoteAuthTickets.expiresAt, now)))
      .returning()
      .get()
  })
}

/** Drop desktops and tickets past their deadline. */
export async function purgeExpired(now: number): Promise<{ desktops: number; tickets: number }> {
  return await write(async (w) => {
    const desktops = await w
      .delete(t.remoteAuthDesktops)
      .where(lte(t.remoteAuthDesktops.expiresAt, now))
      .returning({ f: t.remoteAuthDesktops.fingerprint })
      .all()
    const tickets = await w
      .delete(t.remoteAuthTickets)
      .where(lte(t.remoteAuthTickets.expiresAt, now))
      .returning({ t: t.remoteAuthTickets.ticketHash })
      .all()
    return { desktops: desktops.length, tickets: tickets.length }
  })
}
