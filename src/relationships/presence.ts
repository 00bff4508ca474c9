// Presence and rich presence (issue 45, part 3): Gateway op 3 (or Identify's `presence`) sets a user's status (online,
// idle, dnd, invisible) and activities; PRESENCE_UPDATE goes to the user's friends (a block ends a friendship, so a
// blocked user sees nothing), its game friends (through that game's sessions), and the members of its lobbies (once
// per lobby on its topic; one by one, leaving out those with a block either way, only in a lobby that has such a
// member); invisible looks offline to them; READY's `presences` lists those online. A user is online while any of its
// user or OAuth2 sessions is identified on any node (gateway/presence.ts counts them under `p:<user>`, shared by the
// nodes through the log); when the last one ends, they see it go offline. An activity's `secrets` are never sent to
// anyone else. Op 3 is limited as Discord does: 5 per 20 s per session; past it the update is dropped.
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { clock } from '../core/clock'
import { audiences, events, type GatewayConnection, sees, topics } from '../gateway/bus'
import { countPresence, online } from '../gateway/presence'
import { MAX_ACTIVITIES, PRESENCE_UPDATES_PER_WINDOW, PRESENCE_WINDOW_MS, RelationshipType } from './limits'
import { deletePresence, presenceOf, presencesOf, putPresence } from './presence-store'
import { lobbiesOf } from './game-port'
import { gameRelationshipsOf } from './game-store'
import { blockedWith, relationshipsOf } from './store'
import type { Activity, PresenceRow } from './tables'

const STATUSES = new Set(['online', 'idle', 'dnd', 'invisible'])
const key = (userId: string) => `p:${userId}`

/** Op 3's recent times per Gateway session (the rate limit), per App. */
const newPresence = () => ({ updates: new Map<string, number[]>() })
declare module '../core/app' {
  interface AppState {
    presenceUpdates: ReturnType<typeof newPresence>
  }
}
const held = appState('presenceUpdates', newPresence)

const counts = (caller: Caller) => caller.kind !== 'bot'

export const isUserOnline = (userId: string) => online(key(userId))

const str = (v: unknown, max = 128) => (typeof v === 'string' ? v.slice(0, max) : undefined)
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)

/** An activity as sent, reduced to the fields Discord's rich presence has (anything else is dropped). */
function activityOf(raw: unknown): Activity | undefined {
  if (!raw || typeof raw !== 'object') return undefined
  const a = raw as Record<string, any>
  const name = str(a.name)
  if (name === undefined) return undefined
  const out: Activity = { name, type: Number.isInteger(a.type) && a.type >= 0 && a.type <= 6 ? a.type : 0 }
  if (a.state !== undefined) out.state = str(a.state) ?? null
  if (a.details !== undefined) out.details = str(a.details) ?? null
  if (str(a.application_id, 20)) out.application_id = str(a.application_id, 20)
  if (a.timestamps && typeof a.timestamps === 'object')
    out.timestamps = { start: num(a.timestamps.start), end: num(a.timestamps.end) }
  if (a.party && typeof a.party === 'object') {
    const size = a.party.size
    out.party = {
      id: str(a.party.id),
      size:
        Array.isArray(size) && size.length === 2 && size.every((n) => Number.isInteger(n))
          ? [size[0], size[1]]
          : undefined,
    }
  }
  if (a.assets && typeof a.assets === 'object')
    out.assets = {
      large_image: str(a.assets.large_image, 256),
      large_text: str(a.assets.large_text),
      small_image: str(a.assets.small_image, 256),
      small_text: str(a.assets.small_text),
    }
  if (a.secrets && typeof a.secrets === 'object')
    out.secrets = { join: str(a.secrets.join), spectate: str(a.secrets.spectate), match: str(a.secrets.match) }
  return JSON.parse(JSON.stringify(out)) as Activity // undefined fields out
}

/** What others see of a presence: invisible is offline with nothing; secrets never leave the user. */
export function presenceFor(userId: string, row: Pick<PresenceRow, 'status' | 'activities'> | undefined) {
  const visible = row && row.status !== 'invisible'
  const status = visible ? row.status : 'offline'
  const activities = visible ? row.activities.map(({ secrets: _secrets, ...rest }) => rest) : []
  return {
    user: { id: userId },
    status,
    activities,
    client_status: visible ? { desktop: status } : {},
  }
}

/** The user's game friends, in every game (each sees the presence through that game's sessions). */
async function gameFriendsOf(userId: string) {
  return (await gameRelationshipsOf(userId)).filter((r) => r.type === RelationshipType.FRIEND)
}

async function friendsOf(userId: string): Promise<string[]> {
  return (await relationshipsOf(userId)).filter((r) => r.type === RelationshipType.FRIEND).map((r) => r.otherId)
}

/** Who sees a user's presence change: its friends, and its lobbies' members (not those with a block either way). */
async function tellWatchers(userId: string, row: PresenceRow | undefined): Promise<void> {
  const data = presenceFor(userId, row)
  for (const friend of await friendsOf(userId))
    events.publishToUser(friend, audiences.relationships, 'PRESENCE_UPDATE', data)
  for (const g of await gameFriendsOf(userId))
    events.publishToUser(g.otherId, audiences.game(g.applicationId), 'PRESENCE_UPDATE', data)
  const lobbies = await lobbiesOf(userId)
  if (lobbies.length === 0) return
  const blocked = await blockedWith(userId)
  for (const lobby of lobbies) {
    // One publish per lobby on its topic; only a lobby with a blocked (or blocking) member is told member by member.
    if (!lobby.memberIds.some((m) => blocked.has(m))) events.publish(topics.lobby(lobby.id), 'PRESENCE_UPDATE', data)
    else
      for (const m of lobby.memberIds)
        if (!blocked.has(m)) events.publishToUser(m, audiences.lobby(lobby.applicationId), 'PRESENCE_UPDATE', data)
  }
}

type Presence = { status: string; activities: Activity[] }

/**
 * Op 3's (or Identify's `presence`) status and activities, as kept: an unknown status is online. A game's OAuth2
 * session sets activities of its own application (as the Social SDK does): their application_id is the token's.
 */
function presenceOfPayload(caller: Caller, data: { status?: unknown; activities?: unknown }): Presence {
  const status = typeof data.status === 'string' && STATUSES.has(data.status) ? data.status : 'online'
  const own = caller.kind === 'bearer' && !caller.firstParty ? caller.applicationId : undefined
  const activities = Array.isArray(data.activities)
    ? data.activities
        .slice(0, MAX_ACTIVITIES)
        .flatMap((a) => activityOf(a) ?? [])
        .map((a) => (own ? { ...a, application_id: own } : a))
    : []
  return { status, activities }
}

/** Keep a user's presence; its watchers hear of it when what they see changed (invisible to invisible is nothing). */
async function setPresence(userId: string, next: Presence, before: PresenceRow | undefined): Promise<void> {
  const row = { userId, ...next, updatedAt: clock.now() }
  await putPresence(row)
  if (JSON.stringify(presenceFor(userId, before)) === JSON.stringify(presenceFor(userId, row))) return
  await tellWatchers(userId, row)
}

/**
 * Two users just became friends: each online one's presence goes to the other (as Discord sends a new friend's
 * PRESENCE_UPDATE), so a friends list shows it without waiting for the next change or a new READY.
 */
export async function tellNewFriends(a: string, b: string): Promise<void> {
  for (const [from, to] of [
    [a, b],
    [b, a],
  ] as const) {
    if (!isUserOnline(from)) continue
    const row = await presenceOf(from)
    if (row && row.status !== 'invisible')
      events.publishToUser(to, audiences.relationships, 'PRESENCE_UPDATE', presenceFor(from, row))
  }
}

/** Op 3 from a session: a new status and activities (bots: accepted and ignored, as before). */
export async function presenceUpdate(connection: GatewayConnection, data: unknown): Promise<void> {
  const caller = connection.caller
  if (!counts(caller) || !data || typeof data !== 'object') return
  const now = clock.now()
  const recent = (held().updates.get(connection.sessionId) ?? []).filter((at) => at > now - PRESENCE_WINDOW_MS)
  if (recent.length >= PRESENCE_UPDATES_PER_WINDOW) return
  recent.push(now)
  held().updates.set(connection.sessionId, recent)
  await setPresence(caller.userId, presenceOfPayload(caller, data), await presenceOf(caller.userId))
}

/**
 * A session was identified: the user is online (watchers told when it was not before, on any node), with the status
 * and activities of its Identify's `presence` when it sent one (as Discord), else online (or as it already was).
 */
export async function presenceSessionStart(connection: GatewayConnection): Promise<void> {
  const caller = connection.caller
  if (!counts(caller)) return
  const wasOnline = isUserOnline(caller.userId)
  countPresence(key(caller.userId), 1)
  const given = connection.presence && typeof connection.presence === 'object' ? connection.presence : undefined
  // A row left from before a restart (its user not online) counts for nothing.
  const before = wasOnline ? await presenceOf(caller.userId) : undefined
  if (before && !given) return
  await setPresence(
    caller.userId,
    given ? presenceOfPayload(caller, given) : { status: 'online', activities: [] },
    before,
  )
}

/** A session ended for good: when it was the user's last (on every node), its watchers see it offline. */
export async function presenceSessionEnd(connection: GatewayConnection): Promise<void> {
  held().updates.delete(connection.sessionId)
  const caller = connection.caller
  if (!counts(caller)) return
  // A dead node's session (orphan) was counted on that node, whose counts are dropped already. A session resumed on
  // another node (moved) is counted there now (its session start): uncounted here, and the user is not offline.
  if (!connection.orphan) countPresence(key(caller.userId), -1)
  if (connection.moved || isUserOnline(caller.userId)) return
  const before = await presenceOf(caller.userId)
  await deletePresence(caller.userId)
  if (before && before.status !== 'invisible') await tellWatchers(caller.userId, undefined)
}

/**
 * READY's `presences`: the friends online (for a session that sees relationships) and the members online of the
 * lobbies the session follows, as each shows itself (invisible ones, and anyone with a block either way, left out).
 */
export async function presencesFor(caller: Exclude<Caller, { kind: 'bot' }>) {
  const ids = new Set(sees(caller, audiences.relationships) ? await friendsOf(caller.userId) : [])
  for (const g of await gameFriendsOf(caller.userId))
    if (sees(caller, audiences.game(g.applicationId))) ids.add(g.otherId)
  const ownApp = caller.kind === 'bearer' && !caller.firstParty ? caller.applicationId : undefined
  const lobbySeen = caller.kind === 'user' || sees(caller, audiences.lobby(caller.applicationId))
  const lobbies = lobbySeen ? await lobbiesOf(caller.userId, ownApp) : []
  if (lobbies.length) {
    const blocked = await blockedWith(caller.userId)
    for (const lobby of lobbies) for (const m of lobby.memberIds) if (m !== caller.userId && !blocked.has(m)) ids.add(m)
  }
  const online = [...ids].filter(isUserOnline)
  return (await presencesOf(online)).filter((p) => p.status !== 'invisible').map((p) => presenceFor(p.userId, p))
}

/**
 * A member joined a lobby (lobbies/effects.ts, once committed): the lobby's members see its presence (once, on the
 * lobby's topic; member by member where a block either way is in the lobby) and it sees theirs, as each shows itself.
 */
export async function presenceOnJoin(lobbyId: string, applicationId: string, userId: string): Promise<void> {
  const lobby = (await lobbiesOf(userId, applicationId)).find((l) => l.id === lobbyId)
  if (!lobby) return
  const blocked = await blockedWith(userId)
  const mates = lobby.memberIds.filter((m) => m !== userId && !blocked.has(m))
  const audience = audiences.lobby(applicationId)
  const own = isUserOnline(userId) ? await presenceOf(userId) : undefined
  if (own && own.status !== 'invisible') {
    const data = presenceFor(userId, own)
    if (!lobby.memberIds.some((m) => blocked.has(m))) events.publish(topics.lobby(lobbyId), 'PRESENCE_UPDATE', data)
    else for (const m of [userId, ...mates]) events.publishToUser(m, audience, 'PRESENCE_UPDATE', data)
  }
  for (const p of await presencesOf(mates.filter(isUserOnline)))
    if (p.status !== 'invisible') events.publishToUser(userId, audience, 'PRESENCE_UPDATE', presenceFor(p.userId, p))
}
