// The lobbies domain's queries, async as every store (docs/DESIGN.md, "Stores are async"), in four files: this one
// holds the lobby rows and their idle deadlines, and what the others share (the tables `t`, the caches);
// members-store.ts the members (and their voice state), messages-store.ts the messages, event-deliveries-store.ts
// the event webhooks' outbox. Writers that are part of a caller's transaction take it as `tx`; the others run behind
// the write mutex (`write`).
//
// The queries of the hot paths are prepared once per connection (`prepared()`, db/client.ts); they run on the
// connection of the caller's scope (inside a transaction, the write connection).
import { and, count, eq, isNotNull, isNull, lte, ne, or, sql } from 'drizzle-orm'
import { appState } from '../core/app'
import { PageCache, rowCache } from '../db/cache'
import {
  andThen,
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
} from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import { type ColumnOf, insertColumns } from '../db/insert-columns'
import * as sqliteTables from './tables'
import type { LobbyMemberRow, LobbyRow, Metadata } from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables)
// The other store files of the domain reach the tables through this one `t`.
export { t }

const ph = sql.placeholder

// A lobby's row and its member list, as the hot reads (GET, messages, joins) ask for them; every write that
// touches a lobby's row or members forgets that lobby (db/cache.ts has the rules). What is exported of the caches is
// for the domain's other store files.
// The REST lobby's JSON text (GET /lobbies/{id} of an unlinked lobby) is made of both, and forgotten with either.
const lobbyRows = rowCache<string, LobbyRow>('lobbies', 4096)
// Bounded by what they hold too: lobbies of up to 1000 members with 1 KB of metadata each.
export const memberLists = rowCache<string, LobbyMemberRow[]>('lobby-members', 4096, {
  weigh: (list) => list.length,
  total: 100_000,
})
const lobbyTexts = rowCache<string, string>('lobby-texts', 4096, {
  weigh: (text) => text.length,
  total: 32 * 1024 * 1024,
})
export const forgetLobby = (id: string) => {
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
export const forgetMembers = (lobbyId: string) => {
  memberLists.forget(lobbyId)
  lobbyTexts.forget(lobbyId)
}
/** Every lobby, member list and lobby text forgotten (at start, when every member's voice state is cleared). */
export const forgetAllLobbies = () => {
  lobbyRows.clear()
  memberLists.clear()
  lobbyTexts.clear()
}

// Pages of GET /lobbies/{id}/messages as sent (JSON text), per lobby and query: a message posted to the lobby or its
// deletion forgets them; a page made before a user row changed (an author renamed) is made again.
export const messagePages = new PageCache('lobby-message-pages', 1024, 16, 64 * 1024 * 1024)

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
// A new lobby's columns: the statement's placeholders, the values that fill them and LobbyInsert are made from them.
const lobbyColumns = insertColumns(
  [
    'id',
    'applicationId',
    'metadata',
    'flags',
    'idleTimeoutSeconds',
    'secretHash',
    'secretExpiresAt',
    'createdVia',
    'idleDeadline',
    'createdAt',
    'overrideEventWebhooksUrl',
  ],
  { json: ['metadata'], fallbacks: { flags: 0, createdVia: 'put' } },
)
const lobbyInsert = prepared((d) => d.insert(t.lobbies).values(lobbyColumns.values()).returning().prepare())
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

/**
 * The lobby's row, from the cache or read: a plain value on SQLite, which cachedLobbyWithMembers (members-store.ts)
 * answers without awaiting.
 */
export function readLobby(id: string): LobbyRow | undefined | Promise<LobbyRow | undefined> {
  return lobbyRows.read(id, () => lobbyById().get({ id }))
}

export async function cachedLobby(id: string): Promise<LobbyRow | undefined> {
  return readLobby(id)
}

export async function getLobbyBySecret(applicationId: string, secretHash: string): Promise<LobbyRow | undefined> {
  return lobbyBySecret().get({ applicationId, secretHash })
}

export async function getLobbyByChannel(channelId: string, tx: DB = db()): Promise<LobbyRow | undefined> {
  return tx.select().from(t.lobbies).where(eq(t.lobbies.linkedChannelId, channelId)).get()
}

export type LobbyInsert = Pick<typeof t.lobbies.$inferInsert, ColumnOf<typeof lobbyColumns>>

export async function insertLobby(row: LobbyInsert): Promise<LobbyRow> {
  forgetLobby(row.id)
  forgetMembers(row.id)
  return lobbyInsert().get(lobbyColumns.params(row))!
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

export async function updateLobbyMetadata(id: string, metadata: Metadata | null): Promise<LobbyRow> {
  forgetLobby(id)
  return lobbyMetadataUpdate().get({ id, metadata: toJson(metadata) })!
}

export async function deleteLobbyRow(id: string): Promise<LobbyRow | undefined> {
  forgetLobby(id)
  forgetMembers(id)
  messagePages.forget(id)
  return lobbyDelete().get({ id })
}

/** Delete a lobby only if its idle deadline has passed (the sweeper's compare-and-delete). */
export async function deleteIfIdle(id: string, now: number): Promise<LobbyRow | undefined> {
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
export async function clearIdleDeadline(id: string): Promise<void> {
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
const newPendingRestarts = () => new Map<string, { now: number; written: boolean }>()
declare module '../core/app' {
  interface AppState {
    lobbyPendingRestarts: ReturnType<typeof newPendingRestarts>
  }
}
const pendingRestarts = appState('lobbyPendingRestarts', newPendingRestarts)

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
export async function restartIdleDeadline(id: string, now: number): Promise<void> {
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
export async function armIdleDeadlineRow(id: string, now: number): Promise<void> {
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

/** An application's lobbies (`app delete` deletes them one by one, with their events). */
export async function applicationLobbyIds(applicationId: string): Promise<string[]> {
  const rows = await db()
    .select({ id: t.lobbies.id })
    .from(t.lobbies)
    .where(eq(t.lobbies.applicationId, applicationId))
    .all()
  return rows.map((r) => r.id)
}

/** Every lobby (the /metrics gauge). */
export async function countLobbies(): Promise<number> {
  return (await db().select({ n: count() }).from(t.lobbies).get())?.n ?? 0
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
