// Presence and rich presence (issue 45, part 3): Gateway op 3 sets a user's status (online, idle, dnd, invisible) and
// activities; PRESENCE_UPDATE goes to the user's friends (a block ends a friendship, so a blocked user sees nothing);
// invisible looks offline to them; READY's `presences` lists the friends online. A user is online while any of its
// user or OAuth2 sessions is identified on any node (gateway/presence.ts counts them under `p:<user>`, shared by the
// nodes through the log); when the last one ends, its friends see it go offline. An activity's `secrets` are never
// sent to anyone else. Op 3 is limited as Discord does: 5 per 20 s per session; past it the update is dropped.
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { clock } from '../core/clock'
import { audiences, events, type GatewayConnection } from '../gateway/bus'
import { countPresence, online } from '../gateway/presence'
import { MAX_ACTIVITIES, PRESENCE_UPDATES_PER_WINDOW, PRESENCE_WINDOW_MS, RelationshipType } from './limits'
import { deletePresence, presenceOf, presencesOf, putPresence } from './presence-store'
import { relationshipsOf } from './store'
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

async function friendsOf(userId: string): Promise<string[]> {
  return (await relationshipsOf(userId)).filter((r) => r.type === RelationshipType.FRIEND).map((r) => r.otherId)
}

async function tellFriends(userId: string, row: PresenceRow | undefined): Promise<void> {
  const data = presenceFor(userId, row)
  for (const friend of await friendsOf(userId))
    events.publishToUser(friend, audiences.relationships, 'PRESENCE_UPDATE', data)
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
  const d = data as { status?: unknown; activities?: unknown }
  const status = typeof d.status === 'string' && STATUSES.has(d.status) ? d.status : 'online'
  const activities = Array.isArray(d.activities)
    ? d.activities.slice(0, MAX_ACTIVITIES).flatMap((a) => activityOf(a) ?? [])
    : []
  const before = await presenceOf(caller.userId)
  const row = { userId: caller.userId, status, activities, updatedAt: now }
  await putPresence(row)
  // Invisible to invisible (or the same again) changes nothing others see.
  if (JSON.stringify(presenceFor(caller.userId, before)) === JSON.stringify(presenceFor(caller.userId, row))) return
  await tellFriends(caller.userId, row)
}

/** A session was identified: the user is online (friends told when it was not before, on any node). */
export async function presenceSessionStart(connection: GatewayConnection): Promise<void> {
  const caller = connection.caller
  if (!counts(caller)) return
  const wasOnline = isUserOnline(caller.userId)
  countPresence(key(caller.userId), 1)
  if (wasOnline && (await presenceOf(caller.userId))) return
  const row = { userId: caller.userId, status: 'online', activities: [], updatedAt: clock.now() }
  await putPresence(row)
  await tellFriends(caller.userId, row)
}

/** A session ended for good: when it was the user's last (on every node), its friends see it offline. */
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
  if (before && before.status !== 'invisible') await tellFriends(caller.userId, undefined)
}

/** READY's `presences`: the friends online, as each shows itself (invisible ones are left out). */
export async function friendPresences(userId: string) {
  const online = (await friendsOf(userId)).filter(isUserOnline)
  return (await presencesOf(online)).filter((p) => p.status !== 'invisible').map((p) => presenceFor(p.userId, p))
}
