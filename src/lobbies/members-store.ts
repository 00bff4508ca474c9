// The lobbies domain's queries of its members and their voice state (store.ts holds the domain's lobby rows and what
// its store files share: the tables `t`, the caches).
import { and, count, eq, isNotNull, type SQL, sql } from 'drizzle-orm'
import { andThen, type DB, jsonPlaceholder, prepared, toJson, transaction } from '../db/client'
import { type ColumnOf, insertColumns } from '../db/insert-columns'
import { cachedLobby, clearIdleDeadline, forgetAllLobbies, forgetMembers, memberLists, readLobby, t } from './store'
import type { LobbyMemberRow, LobbyRow, Metadata } from './tables'

const ph = sql.placeholder

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
// A new member's columns: the statement's placeholders, the values that fill them and MemberInsert are made from them.
const memberColumns = insertColumns(['lobbyId', 'userId', 'applicationId', 'metadata', 'flags', 'joinedAt'], {
  json: ['metadata'],
  fallbacks: { flags: 0 },
})
const memberInsert = prepared((d) => d.insert(t.lobbyMembers).values(memberColumns.values()).returning().prepare())
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
export async function cachedLobbyMembers(lobbyId: string): Promise<LobbyMemberRow[]> {
  return memberLists.read(lobbyId, () => andThen(membersOf().all({ lobbyId }), (rows) => rows.sort(memberOrder)))!
}

/**
 * A lobby and its members (GET /lobbies/{id}), read together: from the caches, else on SQLite in one synchronous step
 * on the read connection (nothing of this process committed in between); on PostgreSQL both statements at once.
 */
export async function cachedLobbyWithMembers(
  id: string,
): Promise<{ lobby: LobbyRow; members: LobbyMemberRow[] } | undefined> {
  const lobbyRead = readLobby(id)
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

export async function getMember(lobbyId: string, userId: string): Promise<LobbyMemberRow | undefined> {
  return memberOf().get({ lobbyId, userId })
}

export type MemberInsert = Pick<typeof t.lobbyMembers.$inferInsert, ColumnOf<typeof memberColumns>>

export async function insertMember(row: MemberInsert): Promise<LobbyMemberRow> {
  forgetMembers(row.lobbyId)
  return memberInsert().get(memberColumns.params(row))!
}

/** Change a member's metadata, and its flags when given. */
export async function updateMember(
  lobbyId: string,
  userId: string,
  patch: { metadata: Metadata | null; flags?: number },
): Promise<LobbyMemberRow> {
  forgetMembers(lobbyId)
  const metadata = toJson(patch.metadata)
  if (patch.flags === undefined) return memberMetadataUpdate().get({ lobbyId, userId, metadata })!
  return memberUpdate().get({ lobbyId, userId, metadata, flags: patch.flags })!
}

export async function deleteMember(lobbyId: string, userId: string): Promise<LobbyMemberRow | undefined> {
  forgetMembers(lobbyId)
  return memberDelete().get({ lobbyId, userId })
}

export async function countMembers(lobbyId: string): Promise<number> {
  return (await memberCount().get({ lobbyId }))?.n ?? 0
}

export async function countUserLobbies(userId: string, applicationId: string): Promise<number> {
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
    await transaction(async () => {
      for (const id of running) await clearIdleDeadline(id)
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
    forgetAllLobbies()
    await tx.update(t.lobbyMembers).set({ voiceSessionId: null }).where(isNotNull(t.lobbyMembers.voiceSessionId)).run()
    await tx
      .update(t.lobbies)
      .set({ idleDeadline: sql`CAST(${now} AS bigint) + ${t.lobbies.idleTimeoutSeconds} * 1000` })
      .where(sql`${t.lobbies.idleDeadline} IS NULL`)
      .run()
  })
}
