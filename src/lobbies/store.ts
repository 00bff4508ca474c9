// Every query of the lobbies domain, async as every store (docs/DESIGN.md, "Stores are async"). Writers that are
// part of a caller's transaction take it as `tx`; the others run behind the write mutex (`write`).
//
// The queries of the hot paths are prepared once per connection (`prepared()`, db/client.ts); they run on the
// connection of the caller's scope (inside a transaction, the write connection).
import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNotNull,
  isNull,
  lt,
  lte,
  ne,
  notInArray,
  or,
  type SQL,
  sql,
} from 'drizzle-orm'
import { usersVersion } from '../accounts/store'
import { perApp } from '../core/app-context'
import { PageCache, rowCache } from '../db/cache'
import {
  andThen,
  asInteger,
  atBatchEnd,
  sendWithCommit,
  inPipelinedBatch,
  type DB,
  db,
  inQueuedBatch,
  jsonPlaceholder,
  lockForUpdate,
  lockName,
  prepared,
  toJson,
  transaction,
  write,
} from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { LobbyEventDeliveryRow, LobbyMemberRow, LobbyMessageRow, LobbyRow, Metadata } from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables)

const ph = sql.placeholder

// A lobby's row and its member list, as the hot reads (GET, messages, joins) ask for them; every write below that
// touches a lobby's row or members forgets that lobby (db/cache.ts has the rules).
// The REST lobby's JSON text (GET /lobbies/{id} of an unlinked lobby) is made of both, and forgotten with either.
const lobbyRows = rowCache<string, LobbyRow>('lobbies', 4096)
// Bounded by what they hold too: lobbies of up to 1000 members with 1 KB of metadata each.
const memberLists = rowCache<string, LobbyMemberRow[]>('lobby-members', 4096, {
  weigh: (list) => list.length,
  total: 100_000,
})
const lobbyTexts = rowCache<string, string>('lobby-texts', 4096, {
  weigh: (text) => text.length,
  total: 32 * 1024 * 1024,
})
const forgetLobby = (id: string) => {
  lobbyRows.forget(id)
  lobbyTexts.forget(id)
}
/**
 * Start the countdown over. What reads a cached lobby row asks only whether its deadline is set (activity.ts,
 * clearIdleDeadlinesOf, voice-presence.ts), so a cached row whose deadline is set is kept, and its restart only moves a
 * deadline that is set: the row stays as the cache says it is (a clear that committed meanwhile wins, as if this ran
 * before it). One unset, or not cached here (another node may hold it), is forgotten as for any write. Forgetting the
 * lobby for every message made the next one read it again: on PostgreSQL a round trip, on several nodes an
 * invalidation in the log.
 */
const restartDeadline = (id: string, now: number) => {
  if (lobbyRows.peek(id)?.idleDeadline != null) return idleDeadlineMove().run({ id, now })
  forgetLobby(id)
  return idleDeadlineRestart().run({ id, now })
}
const forgetMembers = (lobbyId: string) => {
  memberLists.forget(lobbyId)
  lobbyTexts.forget(lobbyId)
}

// Pages of GET /lobbies/{id}/messages as sent (JSON text), per lobby and query: a message posted to the lobby or its
// deletion forgets them; a page made before a user row changed (an author renamed) is made again.
const messagePages = new PageCache('lobby-message-pages', 1024, 16, 64 * 1024 * 1024)

/** The lobby's page of messages for this query as JSON text: cached, else `build()`'s. */
export async function cachedMessagePage(lobbyId: string, query: string, build: () => Promise<string>): Promise<string> {
  return messagePages.read(lobbyId, query, usersVersion(), build)
}

/** The lobby's REST JSON text, cached with its row and members: `build` makes it from the rows just read. */
export function cachedLobbyText(id: string, build: () => string): string {
  return lobbyTexts.read(id, build)!
}

// ---- lobbies

const lobbyById = prepared((d) =>
  d
    .select()
    .from(t.lobbies)
    .where(eq(t.lobbies.id, ph('id')))
    .prepare(),
)
const lobbyBySecret = prepared((d) =>
  d
    .select()
    .from(t.lobbies)
    .where(and(eq(t.lobbies.applicationId, ph('applicationId')), eq(t.lobbies.secretHash, ph('secretHash'))))
    .prepare(),
)
const lobbyInsert = prepared((d) =>
  d
    .insert(t.lobbies)
    .values({
      id: ph('id'),
      applicationId: ph('applicationId'),
      metadata: jsonPlaceholder('metadata'),
      flags: ph('flags'),
      idleTimeoutSeconds: ph('idleTimeoutSeconds'),
      secretHash: ph('secretHash'),
      secretExpiresAt: ph('secretExpiresAt'),
      createdVia: ph('createdVia'),
      idleDeadline: ph('idleDeadline'),
      createdAt: ph('createdAt'),
      overrideEventWebhooksUrl: ph('overrideEventWebhooksUrl'),
    })
    .returning()
    .prepare(),
)
const lobbyMetadataUpdate = prepared((d) =>
  d
    .update(t.lobbies)
    .set({ metadata: jsonPlaceholder('metadata') })
    .where(eq(t.lobbies.id, ph('id')))
    .returning()
    .prepare(),
)
const lobbyDelete = prepared((d) =>
  d
    .delete(t.lobbies)
    .where(eq(t.lobbies.id, ph('id')))
    .returning()
    .prepare(),
)
const idleLobbyDelete = prepared((d) =>
  d
    .delete(t.lobbies)
    .where(and(eq(t.lobbies.id, ph('id')), isNotNull(t.lobbies.idleDeadline), lte(t.lobbies.idleDeadline, ph('now'))))
    .returning()
    .prepare(),
)
// The idle countdown (activity.ts), written without reading the lobby first: stop it, or start it over from `now`
// with the lobby's own timeout; no write when it already is so.
const idleDeadlineClear = prepared((d) =>
  d
    .update(t.lobbies)
    .set({ idleDeadline: null })
    .where(and(eq(t.lobbies.id, ph('id')), isNotNull(t.lobbies.idleDeadline)))
    .prepare(),
)
const restartedDeadline = sql`CAST(${ph('now')} AS bigint) + ${t.lobbies.idleTimeoutSeconds} * 1000`
const idleDeadlineRestart = prepared((d) =>
  d
    .update(t.lobbies)
    .set({ idleDeadline: restartedDeadline })
    .where(
      and(
        eq(t.lobbies.id, ph('id')),
        or(isNull(t.lobbies.idleDeadline), ne(t.lobbies.idleDeadline, restartedDeadline)),
      ),
    )
    .prepare(),
)
const idleDeadlineMove = prepared((d) =>
  d
    .update(t.lobbies)
    .set({ idleDeadline: restartedDeadline })
    .where(
      and(eq(t.lobbies.id, ph('id')), isNotNull(t.lobbies.idleDeadline), ne(t.lobbies.idleDeadline, restartedDeadline)),
    )
    .prepare(),
)
const idleDeadlineArm = prepared((d) =>
  d
    .update(t.lobbies)
    .set({ idleDeadline: restartedDeadline })
    .where(and(eq(t.lobbies.id, ph('id')), isNull(t.lobbies.idleDeadline)))
    .prepare(),
)

export async function cachedLobby(id: string, _tx?: DB): Promise<LobbyRow | undefined> {
  return lobbyRows.read(id, () => lobbyById().get({ id }))
}

export async function getLobbyBySecret(
  _tx: DB,
  applicationId: string,
  secretHash: string,
): Promise<LobbyRow | undefined> {
  return lobbyBySecret().get({ applicationId, secretHash })
}

export async function getLobbyByChannel(channelId: string, tx: DB = db()): Promise<LobbyRow | undefined> {
  return tx.select().from(t.lobbies).where(eq(t.lobbies.linkedChannelId, channelId)).get()
}

export type LobbyInsert = Pick<
  typeof t.lobbies.$inferInsert,
  | 'id'
  | 'applicationId'
  | 'metadata'
  | 'flags'
  | 'idleTimeoutSeconds'
  | 'secretHash'
  | 'secretExpiresAt'
  | 'createdVia'
  | 'idleDeadline'
  | 'createdAt'
  | 'overrideEventWebhooksUrl'
>

export async function insertLobby(_tx: DB, row: LobbyInsert): Promise<LobbyRow> {
  forgetLobby(row.id)
  forgetMembers(row.id)
  return lobbyInsert().get({
    id: row.id,
    applicationId: row.applicationId,
    metadata: toJson(row.metadata),
    flags: row.flags ?? 0,
    idleTimeoutSeconds: row.idleTimeoutSeconds,
    secretHash: row.secretHash ?? null,
    secretExpiresAt: row.secretExpiresAt ?? null,
    createdVia: row.createdVia ?? 'put',
    idleDeadline: row.idleDeadline ?? null,
    createdAt: row.createdAt,
    overrideEventWebhooksUrl: row.overrideEventWebhooksUrl ?? null,
  })!
}

/** Change columns of a lobby (a patch of any shape: built per call). */
export async function updateLobby(
  tx: DB,
  id: string,
  patch: Partial<typeof t.lobbies.$inferInsert>,
): Promise<LobbyRow> {
  forgetLobby(id)
  return tx.update(t.lobbies).set(patch).where(eq(t.lobbies.id, id)).returning().get()
}

export async function updateLobbyMetadata(_tx: DB, id: string, metadata: Metadata | null): Promise<LobbyRow> {
  forgetLobby(id)
  return lobbyMetadataUpdate().get({ id, metadata: toJson(metadata) })!
}

export async function deleteLobbyRow(_tx: DB, id: string): Promise<LobbyRow | undefined> {
  forgetLobby(id)
  forgetMembers(id)
  messagePages.forget(id)
  return lobbyDelete().get({ id })
}

/** Delete a lobby only if its idle deadline has passed (the sweeper's compare-and-delete). */
export async function deleteIfIdle(_tx: DB, id: string, now: number): Promise<LobbyRow | undefined> {
  forgetLobby(id)
  forgetMembers(id)
  messagePages.forget(id)
  return idleLobbyDelete().get({ id, now })
}

/** What run() answers on both databases (db/pg/client.ts gives SQLite's), where Drizzle's type says nothing. */
type Ran = { changes: number }

/**
 * Stop the lobby's idle countdown (someone keeps it active: every message of a lobby with a member online). A cached
 * row whose deadline is unset is kept (as restartDeadline keeps one set), and the UPDATE goes out with the COMMIT on
 * PostgreSQL; if it changed the row all the same (a countdown another transaction committed since the row was
 * cached), the lobby is forgotten then, before the COMMIT, as for any write.
 */
export async function clearIdleDeadline(_tx: DB, id: string): Promise<void> {
  pendingRestarts().delete(id)
  if (lobbyRows.peek(id)?.idleDeadline !== null) {
    forgetLobby(id)
    await sendWithCommit(idleDeadlineClear().run({ id }))
    return
  }
  const ran = idleDeadlineClear().run({ id }) as unknown as Ran // a promise of it on PostgreSQL (andThen)
  await sendWithCommit(
    andThen(ran, ({ changes }) => {
      if (changes > 0) forgetLobby(id)
    }),
  )
}

// Lobby id → the time of its last activity among the writes of the group-commit batch now running (messages): the
// batch writes each lobby's deadline once, at its end, instead of once per message (and the cached row is forgotten
// once). Inside the batch's transaction, so the deadline commits with the messages. In a pipelined batch (PostgreSQL)
// the first message of a lobby writes it at once, from its own time, beside its insert: the same round trip, where
// the end would take one more. (A write that records its activity and is then undone alone by its savepoint leaves
// its entry: the countdown restarts all the same, which only keeps that lobby a little longer.) `written`: sent.
const pendingRestarts = perApp(() => new Map<string, { now: number; written: boolean }>())

/** The batch's deadline writes, registered once per service (the lobbies module's install). */
export function deferIdleRestartsToBatchEnd(): void {
  atBatchEnd({
    async flush() {
      const pending = [...pendingRestarts()]
      pendingRestarts().clear()
      // Sent all at once (on PostgreSQL with the COMMIT: one round trip for all of them).
      await Promise.all(pending.map(([id, { now, written }]) => (written ? undefined : restartDeadline(id, now))))
    },
    discard: () => pendingRestarts().clear(),
  })
}

/** Start the lobby's idle countdown over: idle_timeout_seconds from `now`. */
export async function restartIdleDeadline(_tx: DB, id: string, now: number): Promise<void> {
  if (inQueuedBatch()) {
    const pending = pendingRestarts().get(id)
    if (pending) {
      if (!pending.written) pending.now = now
      return
    }
    const written = inPipelinedBatch()
    pendingRestarts().set(id, { now, written })
    if (written) await restartDeadline(id, now)
    return
  }
  await restartDeadline(id, now)
}

/** Start the countdown from `now` unless it already runs. */
export async function armIdleDeadlineRow(_tx: DB, id: string, now: number): Promise<void> {
  forgetLobby(id)
  await idleDeadlineArm().run({ id, now })
}

export async function dueIdleLobbies(now: number, limit: number): Promise<string[]> {
  return (
    await db()
      .select({ id: t.lobbies.id })
      .from(t.lobbies)
      .where(and(isNotNull(t.lobbies.idleDeadline), lte(t.lobbies.idleDeadline, now)))
      .limit(limit)
      .all()
  ).map((r) => r.id)
}

/** Every lobby (the /metrics gauge). */
export async function countLobbies(): Promise<number> {
  return (await db().select({ n: count() }).from(t.lobbies).get())?.n ?? 0
}

// ---- members

// Sorted here rather than by ORDER BY: SQLite sorts through a temporary b-tree, which costs more than the whole read
// for a lobby's few members.
const membersOf = prepared((d) =>
  d
    .select()
    .from(t.lobbyMembers)
    .where(eq(t.lobbyMembers.lobbyId, ph('lobbyId')))
    .prepare(),
)
/** joined_at, then user id (text order: ids are ASCII, so JavaScript's order is SQLite's BINARY one). */
export const memberOrder = (a: LobbyMemberRow, b: LobbyMemberRow) =>
  a.joinedAt - b.joinedAt || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0)
const memberOf = prepared((d) =>
  d
    .select()
    .from(t.lobbyMembers)
    .where(and(eq(t.lobbyMembers.lobbyId, ph('lobbyId')), eq(t.lobbyMembers.userId, ph('userId'))))
    .prepare(),
)
const memberInsert = prepared((d) =>
  d
    .insert(t.lobbyMembers)
    .values({
      lobbyId: ph('lobbyId'),
      userId: ph('userId'),
      applicationId: ph('applicationId'),
      metadata: jsonPlaceholder('metadata'),
      flags: ph('flags'),
      joinedAt: ph('joinedAt'),
    })
    .returning()
    .prepare(),
)
const memberWhere = and(eq(t.lobbyMembers.lobbyId, ph('lobbyId')), eq(t.lobbyMembers.userId, ph('userId')))
const memberUpdate = prepared((d) =>
  d
    .update(t.lobbyMembers)
    .set({ metadata: jsonPlaceholder('metadata'), flags: sql`${ph('flags')}` })
    .where(memberWhere)
    .returning()
    .prepare(),
)
const memberMetadataUpdate = prepared((d) =>
  d
    .update(t.lobbyMembers)
    .set({ metadata: jsonPlaceholder('metadata') })
    .where(memberWhere)
    .returning()
    .prepare(),
)
const memberDelete = prepared((d) => d.delete(t.lobbyMembers).where(memberWhere).returning().prepare())
const memberCount = prepared((d) =>
  d
    .select({ n: count() })
    .from(t.lobbyMembers)
    .where(eq(t.lobbyMembers.lobbyId, ph('lobbyId')))
    .prepare(),
)
const userLobbyCount = prepared((d) =>
  d
    .select({ n: count() })
    .from(t.lobbyMembers)
    .where(and(eq(t.lobbyMembers.userId, ph('userId')), eq(t.lobbyMembers.applicationId, ph('applicationId'))))
    .prepare(),
)
// The lobbies a user is in (of one application): for Gateway topics, and whose idle countdowns stop when they come online.
const ofUser = eq(t.lobbyMembers.userId, ph('userId'))
const ofUserInApp = and(ofUser, eq(t.lobbyMembers.applicationId, ph('applicationId')))
const lobbyIdsWhere = (d: DB, where: SQL | undefined) =>
  d.select({ id: t.lobbyMembers.lobbyId }).from(t.lobbyMembers).where(where)
const lobbyIdsOf = prepared((d) => lobbyIdsWhere(d, ofUser).prepare())
const lobbyIdsOfApp = prepared((d) => lobbyIdsWhere(d, ofUserInApp).prepare())
/** A lobby's members, oldest first (joined_at, then user id). */
export async function cachedLobbyMembers(lobbyId: string, _tx?: DB): Promise<LobbyMemberRow[]> {
  return memberLists.read(lobbyId, () => andThen(membersOf().all({ lobbyId }), (rows) => rows.sort(memberOrder)))!
}

/**
 * A lobby and its members (GET /lobbies/{id}), read together: from the caches, else on SQLite in one synchronous step
 * on the read connection (nothing of this process committed in between); on PostgreSQL both statements at once.
 */
export async function cachedLobbyWithMembers(
  id: string,
): Promise<{ lobby: LobbyRow; members: LobbyMemberRow[] } | undefined> {
  const lobbyRead = lobbyRows.read(id, () => lobbyById().get({ id }))
  const membersRead =
    lobbyRead && memberLists.read(id, () => andThen(membersOf().all({ lobbyId: id }), (rows) => rows.sort(memberOrder)))
  // On SQLite both are plain values: answered without awaiting them (a microtask each, on the hottest read).
  if (!(lobbyRead instanceof Promise) && !(membersRead instanceof Promise))
    return lobbyRead && { lobby: lobbyRead, members: membersRead! }
  const lobby = await lobbyRead
  if (!lobby) return undefined
  return { lobby, members: (await membersRead)! }
}

/** A member, from the lobby's cached member list (read whole when it is not cached: the next request finds it). */
export async function cachedMember(lobbyId: string, userId: string): Promise<LobbyMemberRow | undefined> {
  return (await cachedLobbyMembers(lobbyId)).find((m) => m.userId === userId)
}

export async function getMember(lobbyId: string, userId: string, _tx?: DB): Promise<LobbyMemberRow | undefined> {
  return memberOf().get({ lobbyId, userId })
}

export type MemberInsert = Pick<
  typeof t.lobbyMembers.$inferInsert,
  'lobbyId' | 'userId' | 'applicationId' | 'metadata' | 'flags' | 'joinedAt'
>

export async function insertMember(_tx: DB, row: MemberInsert): Promise<LobbyMemberRow> {
  forgetMembers(row.lobbyId)
  return memberInsert().get({
    lobbyId: row.lobbyId,
    userId: row.userId,
    applicationId: row.applicationId,
    metadata: toJson(row.metadata),
    flags: row.flags ?? 0,
    joinedAt: row.joinedAt,
  })!
}

/** Change a member's metadata, and its flags when given. */
export async function updateMember(
  _tx: DB,
  lobbyId: string,
  userId: string,
  patch: { metadata: Metadata | null; flags?: number },
): Promise<LobbyMemberRow> {
  forgetMembers(lobbyId)
  const metadata = toJson(patch.metadata)
  if (patch.flags === undefined) return memberMetadataUpdate().get({ lobbyId, userId, metadata })!
  return memberUpdate().get({ lobbyId, userId, metadata, flags: patch.flags })!
}

export async function deleteMember(_tx: DB, lobbyId: string, userId: string): Promise<LobbyMemberRow | undefined> {
  forgetMembers(lobbyId)
  return memberDelete().get({ lobbyId, userId })
}

export async function countMembers(_tx: DB, lobbyId: string): Promise<number> {
  return (await memberCount().get({ lobbyId }))?.n ?? 0
}

export async function countUserLobbies(_tx: DB, userId: string, applicationId: string): Promise<number> {
  return (await userLobbyCount().get({ userId, applicationId }))?.n ?? 0
}

/** Lobby ids a user belongs to (for gateway subscriptions), optionally of one application. */
export async function lobbyIdsOfUser(userId: string, applicationId?: string): Promise<string[]> {
  const rows = applicationId ? await lobbyIdsOfApp().all({ userId, applicationId }) : await lobbyIdsOf().all({ userId })
  return rows.map((r) => r.id)
}

/** A member came online: the countdown of each of their lobbies (of one application, if given) stops. */
export async function clearIdleDeadlinesOf(userId: string, applicationId?: string): Promise<void> {
  // Only lobbies whose countdown runs are written, each forgotten alone; their rows are read through the cache
  // (right outside a transaction): most identifies find none, and write nothing.
  const running: string[] = []
  for (const id of await lobbyIdsOfUser(userId, applicationId))
    if ((await cachedLobby(id))?.idleDeadline != null) running.push(id)
  if (running.length)
    await transaction(async (tx) => {
      for (const id of running) await clearIdleDeadline(tx, id)
    })
}

export async function setVoice(
  tx: DB,
  lobbyId: string,
  userId: string,
  voice: { voiceSessionId: string | null; selfMute?: boolean; selfDeaf?: boolean },
): Promise<LobbyMemberRow | undefined> {
  forgetMembers(lobbyId)
  return tx
    .update(t.lobbyMembers)
    .set(voice)
    .where(and(eq(t.lobbyMembers.lobbyId, lobbyId), eq(t.lobbyMembers.userId, userId)))
    .returning()
    .get()
}

/** At start nobody is connected (sockets died with the old process): clear voice and arm every idle deadline. */
export async function resetVoiceAtStart(now: number): Promise<void> {
  await transaction(async (tx) => {
    lobbyRows.clear()
    memberLists.clear()
    lobbyTexts.clear()
    await tx.update(t.lobbyMembers).set({ voiceSessionId: null }).where(isNotNull(t.lobbyMembers.voiceSessionId)).run()
    await tx
      .update(t.lobbies)
      .set({ idleDeadline: sql`CAST(${now} AS bigint) + ${t.lobbies.idleTimeoutSeconds} * 1000` })
      .where(sql`${t.lobbies.idleDeadline} IS NULL`)
      .run()
  })
}

// ---- messages

const messageInsert = prepared((d) =>
  d
    .insert(t.lobbyMessages)
    .values({
      id: ph('id'),
      lobbyId: ph('lobbyId'),
      applicationId: ph('applicationId'),
      authorId: ph('authorId'),
      content: ph('content'),
      metadata: jsonPlaceholder('metadata'),
      flags: ph('flags'),
      tts: ph('tts'),
      nonce: jsonPlaceholder('nonce'),
      enforceNonce: ph('enforceNonce'),
      createdAt: ph('createdAt'),
    })
    .prepare(),
)
const enforcedNonce = prepared((d) =>
  d
    .select()
    .from(t.lobbyMessages)
    .where(
      and(
        eq(t.lobbyMessages.lobbyId, ph('lobbyId')),
        eq(t.lobbyMessages.authorId, ph('authorId')),
        eq(t.lobbyMessages.nonce, jsonPlaceholder('nonce')),
        eq(t.lobbyMessages.enforceNonce, true),
      ),
    )
    .prepare(),
)
const enforcedNonceRelease = prepared((d) =>
  d
    .update(t.lobbyMessages)
    .set({ enforceNonce: false })
    .where(eq(t.lobbyMessages.id, ph('id')))
    .prepare(),
)

// A page of messages: newest first, or (after a cursor alone) the oldest ones newer than it, read ascending.
const messageOrder = asInteger(t.lobbyMessages.id)
const inLobby = eq(t.lobbyMessages.lobbyId, ph('lobbyId'))
const beforeCursor = lt(messageOrder, asInteger(ph('before')))
const afterCursor = gt(messageOrder, asInteger(ph('after')))
const messagePage = (where: SQL | undefined, order: SQL) =>
  prepared((d) => d.select().from(t.lobbyMessages).where(where).orderBy(order).limit(ph('limit')).prepare())
const pageNewest = messagePage(inLobby, desc(messageOrder))
const pageBefore = messagePage(and(inLobby, beforeCursor), desc(messageOrder))
const pageBetween = messagePage(and(inLobby, beforeCursor, afterCursor), desc(messageOrder))
const pageAfter = messagePage(and(inLobby, afterCursor), asc(messageOrder))

export type MessageInsert = Pick<
  typeof t.lobbyMessages.$inferInsert,
  | 'id'
  | 'lobbyId'
  | 'applicationId'
  | 'authorId'
  | 'content'
  | 'metadata'
  | 'flags'
  | 'tts'
  | 'nonce'
  | 'enforceNonce'
  | 'createdAt'
>

/** The row as written: every column is given, so no RETURNING (it cost a third of the insert). */
export async function insertMessage(_tx: DB, row: MessageInsert): Promise<LobbyMessageRow> {
  messagePages.forget(row.lobbyId)
  const written: LobbyMessageRow = {
    id: row.id,
    lobbyId: row.lobbyId,
    applicationId: row.applicationId,
    authorId: row.authorId,
    content: row.content,
    metadata: row.metadata ?? null,
    flags: row.flags ?? 0,
    tts: row.tts ?? false,
    nonce: row.nonce ?? null,
    enforceNonce: row.enforceNonce ?? false,
    createdAt: row.createdAt,
    moderationMetadata: null,
    editedAt: null,
    channelMessageId: null,
  }
  // Nothing of its answer is needed: on PostgreSQL it goes out with the transaction's COMMIT.
  await sendWithCommit(
    messageInsert().run({ ...written, metadata: toJson(written.metadata), nonce: toJson(written.nonce) }),
  )
  return written
}

/** The author's message in the lobby that holds this enforced nonce, if any. */
export async function findEnforcedNonce(
  _tx: DB,
  lobbyId: string,
  authorId: string,
  nonce: string | number,
): Promise<LobbyMessageRow | undefined> {
  return enforcedNonce().get({ lobbyId, authorId, nonce: toJson(nonce) })
}

/** (The enforce_nonce flag is not part of any answer: the lobby's cached pages stay.) */
export async function releaseEnforcedNonce(_tx: DB, messageId: string): Promise<void> {
  await enforcedNonceRelease().run({ id: messageId })
}

export async function listMessages(
  lobbyId: string,
  page: { limit: number; before?: string; after?: string },
): Promise<LobbyMessageRow[]> {
  const { limit, before, after } = page
  if (before !== undefined && after !== undefined) return pageBetween().all({ lobbyId, limit, before, after })
  if (before !== undefined) return pageBefore().all({ lobbyId, limit, before })
  // After a cursor: the oldest `limit` newer ones, still answered newest first.
  if (after !== undefined) return (await pageAfter().all({ lobbyId, limit, after })).reverse()
  return pageNewest().all({ lobbyId, limit })
}

/** One message of the lobby, or undefined (another lobby's message is unknown here). */
export async function findLobbyMessage(
  lobbyId: string,
  messageId: string,
  tx: DB = db(),
): Promise<LobbyMessageRow | undefined> {
  return tx
    .select()
    .from(t.lobbyMessages)
    .where(and(eq(t.lobbyMessages.id, messageId), eq(t.lobbyMessages.lobbyId, lobbyId)))
    .get()
}

/** Replace a message's moderation metadata and stamp its edit time; the lobby's cached pages show it, so they go. */
export async function setModerationMetadata(
  tx: DB,
  lobbyId: string,
  messageId: string,
  moderationMetadata: Metadata,
  editedAt: number,
): Promise<LobbyMessageRow | undefined> {
  messagePages.forget(lobbyId)
  return tx
    .update(t.lobbyMessages)
    .set({ moderationMetadata, editedAt })
    .where(and(eq(t.lobbyMessages.id, messageId), eq(t.lobbyMessages.lobbyId, lobbyId)))
    .returning()
    .get()
}

/** Remember the message's copy in the linked channel. (No answer shows it: the cached pages stay.) */
export async function setChannelCopy(messageId: string, channelMessageId: string): Promise<void> {
  return await write(async (w) => {
    await w.update(t.lobbyMessages).set({ channelMessageId }).where(eq(t.lobbyMessages.id, messageId)).run()
  })
}

// ---- the event webhooks outbox (event-webhooks.ts)

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

// ---- Locks for count-then-write checks (db/client.ts lockForUpdate, lockName; nothing on SQLite)

/** Hold the lobby's row until the transaction ends: its member count and the members it allows are checked alone. */
export async function lockLobby(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.lobbies, t.lobbies.id, id)
}

/** One PUT /lobbies per application and secret at a time (the lobby it makes or joins may not exist yet). */
export async function lockLobbySecret(tx: DB, applicationId: string, secretHash: string): Promise<void> {
  await lockName(tx, `lobby-secret:${applicationId}:${secretHash}`)
}

/** One enforce_nonce send per lobby, author and nonce at a time (the message it finds may not exist yet). */
export async function lockEnforcedNonce(
  tx: DB,
  lobbyId: string,
  authorId: string,
  nonce: string | number,
): Promise<void> {
  await lockName(tx, `lobby-nonce:${lobbyId}:${authorId}:${JSON.stringify(nonce)}`)
}
