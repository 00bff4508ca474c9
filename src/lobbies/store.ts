// Every query of the lobbies domain. Writers take the transaction (bun:sqlite transactions are synchronous).
import { and, inArray, asc, count, desc, eq, isNotNull, lte, sql } from 'drizzle-orm'
import { db, type DB } from '../db/client'
import { lobbies, lobbyMembers, lobbyMessages, type LobbyMemberRow, type LobbyMessageRow, type LobbyRow, type Metadata } from './tables'

export function getLobby(id: string, tx: DB = db()): LobbyRow | undefined {
  return tx.select().from(lobbies).where(eq(lobbies.id, id)).get()
}

export function getLobbyBySecret(tx: DB, applicationId: string, secretHash: string): LobbyRow | undefined {
  return tx.select().from(lobbies).where(and(eq(lobbies.applicationId, applicationId), eq(lobbies.secretHash, secretHash))).get()
}

export function getLobbyByChannel(channelId: string, tx: DB = db()): LobbyRow | undefined {
  return tx.select().from(lobbies).where(eq(lobbies.linkedChannelId, channelId)).get()
}

export function insertLobby(tx: DB, row: typeof lobbies.$inferInsert): LobbyRow {
  return tx.insert(lobbies).values(row).returning().get()
}

export function updateLobby(tx: DB, id: string, patch: Partial<typeof lobbies.$inferInsert>): LobbyRow {
  return tx.update(lobbies).set(patch).where(eq(lobbies.id, id)).returning().get()
}

export function deleteLobbyRow(tx: DB, id: string): LobbyRow | undefined {
  return tx.delete(lobbies).where(eq(lobbies.id, id)).returning().get()
}

/** Delete a lobby only if its idle deadline has passed (the sweeper's compare-and-delete). */
export function deleteIfIdle(tx: DB, id: string, now: number): LobbyRow | undefined {
  return tx.delete(lobbies).where(and(eq(lobbies.id, id), isNotNull(lobbies.idleDeadline), lte(lobbies.idleDeadline, now))).returning().get()
}

export function dueIdleLobbies(now: number, limit: number): string[] {
  return db()
    .select({ id: lobbies.id })
    .from(lobbies)
    .where(and(isNotNull(lobbies.idleDeadline), lte(lobbies.idleDeadline, now)))
    .limit(limit)
    .all()
    .map((r) => r.id)
}

export function listMembers(lobbyId: string, tx: DB = db()): LobbyMemberRow[] {
  return tx.select().from(lobbyMembers).where(eq(lobbyMembers.lobbyId, lobbyId)).orderBy(lobbyMembers.joinedAt, lobbyMembers.userId).all()
}

export function getMember(lobbyId: string, userId: string, tx: DB = db()): LobbyMemberRow | undefined {
  return tx.select().from(lobbyMembers).where(and(eq(lobbyMembers.lobbyId, lobbyId), eq(lobbyMembers.userId, userId))).get()
}

export function insertMember(tx: DB, row: typeof lobbyMembers.$inferInsert): LobbyMemberRow {
  return tx.insert(lobbyMembers).values(row).returning().get()
}

export function updateMember(tx: DB, lobbyId: string, userId: string, patch: { metadata?: Metadata | null; flags?: number }): LobbyMemberRow {
  return tx
    .update(lobbyMembers)
    .set(patch)
    .where(and(eq(lobbyMembers.lobbyId, lobbyId), eq(lobbyMembers.userId, userId)))
    .returning()
    .get()
}

export function deleteMember(tx: DB, lobbyId: string, userId: string): LobbyMemberRow | undefined {
  return tx.delete(lobbyMembers).where(and(eq(lobbyMembers.lobbyId, lobbyId), eq(lobbyMembers.userId, userId))).returning().get()
}

export function countMembers(tx: DB, lobbyId: string): number {
  return tx.select({ n: count() }).from(lobbyMembers).where(eq(lobbyMembers.lobbyId, lobbyId)).get()?.n ?? 0
}

/** Every lobby (the /metrics gauge). */
export function countLobbies(): number {
  return db().select({ n: count() }).from(lobbies).get()?.n ?? 0
}

export function countUserLobbies(tx: DB, userId: string, applicationId: string): number {
  return tx.select({ n: count() }).from(lobbyMembers).where(and(eq(lobbyMembers.userId, userId), eq(lobbyMembers.applicationId, applicationId))).get()?.n ?? 0
}

/** Lobby ids a user belongs to (for gateway subscriptions), optionally of one application. */
export function lobbyIdsOfUser(userId: string, applicationId?: string): string[] {
  const where = applicationId
    ? and(eq(lobbyMembers.userId, userId), eq(lobbyMembers.applicationId, applicationId))
    : eq(lobbyMembers.userId, userId)
  return db().select({ id: lobbyMembers.lobbyId }).from(lobbyMembers).where(where).all().map((r) => r.id)
}

/** The user ids of a lobby's members. */
export function memberUserIds(tx: DB, lobbyId: string): string[] {
  return tx.select({ id: lobbyMembers.userId }).from(lobbyMembers).where(eq(lobbyMembers.lobbyId, lobbyId)).all().map((r) => r.id)
}

/** A member came online: the countdown of each of their lobbies (of one application, if given) stops. */
export function clearIdleDeadlinesOf(userId: string, applicationId?: string): void {
  const mine = db()
    .select({ id: lobbyMembers.lobbyId })
    .from(lobbyMembers)
    .where(applicationId ? and(eq(lobbyMembers.userId, userId), eq(lobbyMembers.applicationId, applicationId)) : eq(lobbyMembers.userId, userId))
  db().update(lobbies).set({ idleDeadline: null }).where(and(isNotNull(lobbies.idleDeadline), inArray(lobbies.id, mine))).run()
}

export function anyoneConnected(tx: DB, lobbyId: string): boolean {
  return (
    tx
      .select({ one: sql`1` })
      .from(lobbyMembers)
      .where(and(eq(lobbyMembers.lobbyId, lobbyId), isNotNull(lobbyMembers.voiceSessionId)))
      .limit(1)
      .get() !== undefined
  )
}

export function setVoice(tx: DB, lobbyId: string, userId: string, voice: { voiceSessionId: string | null; selfMute?: boolean; selfDeaf?: boolean }): LobbyMemberRow | undefined {
  return tx
    .update(lobbyMembers)
    .set(voice)
    .where(and(eq(lobbyMembers.lobbyId, lobbyId), eq(lobbyMembers.userId, userId)))
    .returning()
    .get()
}

/** At start nobody is connected (sockets died with the old process): clear voice and arm every idle deadline. */
export function resetVoiceAtStart(now: number): void {
  db().transaction(
    (tx) => {
      tx.update(lobbyMembers).set({ voiceSessionId: null }).where(isNotNull(lobbyMembers.voiceSessionId)).run()
      tx.update(lobbies)
        .set({ idleDeadline: sql`${now} + ${lobbies.idleTimeoutSeconds} * 1000` })
        .where(sql`${lobbies.idleDeadline} IS NULL`)
        .run()
    },
    { behavior: 'immediate' },
  )
}

export function insertMessage(tx: DB, row: typeof lobbyMessages.$inferInsert): LobbyMessageRow {
  return tx.insert(lobbyMessages).values(row).returning().get()
}

/** The author's message in the lobby that holds this enforced nonce, if any. */
export function findEnforcedNonce(tx: DB, lobbyId: string, authorId: string, nonce: string | number): LobbyMessageRow | undefined {
  return tx
    .select()
    .from(lobbyMessages)
    .where(and(eq(lobbyMessages.lobbyId, lobbyId), eq(lobbyMessages.authorId, authorId), eq(lobbyMessages.nonce, nonce), eq(lobbyMessages.enforceNonce, true)))
    .get()
}

export function releaseEnforcedNonce(tx: DB, messageId: string): void {
  tx.update(lobbyMessages).set({ enforceNonce: false }).where(eq(lobbyMessages.id, messageId)).run()
}

export function listMessages(lobbyId: string, page: { limit: number; before?: string; after?: string }): LobbyMessageRow[] {
  const byId = sql`CAST(${lobbyMessages.id} AS INTEGER)`
  const where = and(
    eq(lobbyMessages.lobbyId, lobbyId),
    page.before !== undefined ? sql`${byId} < CAST(${page.before} AS INTEGER)` : undefined,
    page.after !== undefined ? sql`${byId} > CAST(${page.after} AS INTEGER)` : undefined,
  )
  // After a cursor: the oldest `limit` newer ones, still answered newest first.
  if (page.after !== undefined && page.before === undefined) {
    return db().select().from(lobbyMessages).where(where).orderBy(asc(byId)).limit(page.limit).all().reverse()
  }
  return db().select().from(lobbyMessages).where(where).orderBy(desc(byId)).limit(page.limit).all()
}
