// Every query of the remote-auth domain. Single use is one guarded UPDATE or DELETE ... RETURNING, so parallel
// requests find exactly one winner.
import { and, eq, gt, isNull, lte, sql } from 'drizzle-orm'
import { db, prepared, transaction, write, type DB } from '../db/client'
import { remoteAuthDesktops, remoteAuthTickets, type RemoteAuthDesktopRow, type RemoteAuthTicketRow } from './tables'

export async function insertDesktop(row: typeof remoteAuthDesktops.$inferInsert): Promise<void> {
  return await write((w) => {
    w.insert(remoteAuthDesktops).values(row).run()
  })
}

/** Whether a live desktop already holds this fingerprint. */
export async function fingerprintInUse(fingerprint: string, now: number): Promise<boolean> {
  return !!db()
    .select({ f: remoteAuthDesktops.fingerprint })
    .from(remoteAuthDesktops)
    .where(and(eq(remoteAuthDesktops.fingerprint, fingerprint), gt(remoteAuthDesktops.expiresAt, now)))
    .get()
}

export async function deleteDesktop(fingerprint: string): Promise<void> {
  return await write((w) => {
    w.delete(remoteAuthDesktops).where(eq(remoteAuthDesktops.fingerprint, fingerprint)).run()
  })
}

/** At start: no socket survives a restart, so no desktop row is live. */
export async function deleteAllDesktops(): Promise<number> {
  return await write((w) => {
    return w.delete(remoteAuthDesktops).returning({ f: remoteAuthDesktops.fingerprint }).all().length
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
      .update(remoteAuthDesktops)
      .set({ userId, handshakeHash, claimedAt: now })
      .where(
        and(
          eq(remoteAuthDesktops.fingerprint, fingerprint),
          isNull(remoteAuthDesktops.userId),
          gt(remoteAuthDesktops.expiresAt, now),
        ),
      )
      .returning()
      .get()
  })
}

const byHandshake = prepared((d) =>
  d
    .select()
    .from(remoteAuthDesktops)
    .where(
      and(
        eq(remoteAuthDesktops.handshakeHash, sql.placeholder('hash')),
        eq(remoteAuthDesktops.userId, sql.placeholder('userId')),
        gt(remoteAuthDesktops.expiresAt, sql.placeholder('now')),
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

function takeHandshakeIn(tx: DB, handshakeHash: string, userId: string, now: number): RemoteAuthDesktopRow | undefined {
  return tx
    .delete(remoteAuthDesktops)
    .where(
      and(
        eq(remoteAuthDesktops.handshakeHash, handshakeHash),
        eq(remoteAuthDesktops.userId, userId),
        gt(remoteAuthDesktops.expiresAt, now),
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
  return await transaction((tx) => {
    const desktop = takeHandshakeIn(tx, handshakeHash, userId, now)
    if (!desktop) return undefined
    tx.insert(remoteAuthTickets)
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
      .delete(remoteAuthTickets)
      .where(and(eq(remoteAuthTickets.ticketHash, ticketHash), gt(remoteAuthTickets.expiresAt, now)))
      .returning()
      .get()
  })
}

/** Drop desktops and tickets past their deadline. */
export async function purgeExpired(now: number): Promise<{ desktops: number; tickets: number }> {
  return await write((w) => {
    const desktops = w
      .delete(remoteAuthDesktops)
      .where(lte(remoteAuthDesktops.expiresAt, now))
      .returning({ f: remoteAuthDesktops.fingerprint })
      .all()
    const tickets = w
      .delete(remoteAuthTickets)
      .where(lte(remoteAuthTickets.expiresAt, now))
      .returning({ t: remoteAuthTickets.ticketHash })
      .all()
    return { desktops: desktops.length, tickets: tickets.length }
  })
}
