// Gateway sessions: live or resumable, with the topics they follow. Indexed by user and by auth session
// so domains can change subscriptions and end sessions without knowing about sockets.
import type { ServerWebSocket } from 'bun'
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { Lru } from '../core/lru'
import { isPrivateTopic } from './bus'

export type Socket = ServerWebSocket<unknown>

/**
 * A session's topics. Most sessions follow a handful (their own, the account's, a few lobbies): an array, as a Set
 * costs ~300 bytes even with one entry (measured, bench/RESULTS.md issue 26). A member of many guilds follows one
 * topic per channel it can view: past SMALL_TOPICS the list becomes a Set, so following one stays O(1).
 */
export type TopicList = string[] | Set<string>
const SMALL_TOPICS = 16

export type GatewaySession = {
  id: string
  caller: Caller
  topics: TopicList
  ws: Socket | null
  /**
   * The live socket asked for zlib-stream: it needs bytes of its own, so it is not subscribed to Bun's pub/sub (which
   * sends identical bytes to every subscriber) but listed in deliveredByTopic, and dispatches reach it one by one.
   */
  compressed?: boolean
  /** clock.now() after which a disconnected session can no longer resume */
  resumableUntil: number
  /** The sequence of the session's READY: a resume never replays what came before it. */
  readySeq: number
}

/** This App's sessions (core/app.ts). */
const newGatewaySessions = () => ({
  byId: new Map<string, GatewaySession>(),
  /** userId → the user's sessions: an array (a user holds a few; a Set would cost ~300 bytes each). */
  byUser: new Map<string, GatewaySession[]>(),
  /**
   * topic → the sessions the Gateway delivers it to itself rather than through Bun's pub/sub: every topic of a
   * compressed socket, and every private topic (one user's: its account, an auth session), whose native topic would
   * cost ~1 KB per socket (measured, bench/RESULTS.md issue 26) for the one or two sessions that follow it. Arrays:
   * most hold one.
   */
  deliveredByTopic: new Map<string, GatewaySession[]>(),
})
declare module '../core/app' {
  interface AppState {
    gatewaySessions: ReturnType<typeof newGatewaySessions>
  }
}
const held = appState('gatewaySessions', newGatewaySessions)

/** Every session of this service, by id. */
export const allSessions = (): Map<string, GatewaySession> => held().byId

/** The sessions the Gateway delivers each topic to itself (see `held`). */
export const topicFollowers = (): Map<string, GatewaySession[]> => held().deliveredByTopic

export function addSession(session: GatewaySession): void {
  const { byId: sessions, byUser } = held()
  sessions.set(session.id, session)
  const list = byUser.get(session.caller.userId)
  if (list) list.push(session)
  else byUser.set(session.caller.userId, [session])
}

export function removeSession(session: GatewaySession): void {
  const { byId: sessions, byUser } = held()
  sessions.delete(session.id)
  const list = byUser.get(session.caller.userId)
  const at = list?.indexOf(session) ?? -1
  if (at < 0) return
  list!.splice(at, 1)
  if (list!.length === 0) byUser.delete(session.caller.userId)
}

/** A user's sessions (the live list: copy it before ending sessions while iterating). */
export function sessionsOfUser(userId: string): readonly GatewaySession[] {
  return held().byUser.get(userId) ?? []
}

export function sessionsOfAuthSession(authSessionId: string): GatewaySession[] {
  const out: GatewaySession[] = []
  for (const s of held().byId.values())
    if (s.caller.kind === 'user' && s.caller.sessionId === authSessionId) out.push(s)
  return out
}

const deliveredHere = (session: GatewaySession, topic: string) => session.compressed || isPrivateTopic(topic)

// A session's own topic is only for its Resume: what is meant for it alone is sent straight to its socket
// (server.ts sendDirect), so no socket subscribes to it (one native subscription less per socket).
function subscribe(session: GatewaySession, ws: Socket, topic: string): void {
  if (topic === session.id) return
  if (!deliveredHere(session, topic)) return void ws.subscribe(topic)
  const deliveredByTopic = held().deliveredByTopic
  const list = deliveredByTopic.get(topic)
  if (!list) deliveredByTopic.set(topic, [session])
  else if (!list.includes(session)) list.push(session)
}

function unsubscribe(session: GatewaySession, ws: Socket, topic: string): void {
  if (topic === session.id) return
  if (!deliveredHere(session, topic)) return void ws.unsubscribe(topic)
  const deliveredByTopic = held().deliveredByTopic
  const list = deliveredByTopic.get(topic)
  const at = list?.indexOf(session) ?? -1
  if (at < 0) return
  list!.splice(at, 1)
  if (list!.length === 0) deliveredByTopic.delete(topic)
}

/**
 * One string per shared topic name (a lobby, a guild, a channel), whichever session follows it: otherwise each
 * session's list holds its own copy, and a guild member follows one topic per channel. Bounded: past it, a name is
 * merely held twice. A private topic has one follower: nothing to share.
 */
const sharedNames = new Lru<string, string>(8192)

function shared(topic: string): string {
  if (isPrivateTopic(topic)) return topic
  const known = sharedNames.get(topic)
  if (known !== undefined) return known
  sharedNames.set(topic, topic)
  return topic
}

/** The session follows the topic from now on; false when it did already. */
export function follow(session: GatewaySession, name: string): boolean {
  const topic = shared(name)
  const list = session.topics
  if (!Array.isArray(list)) {
    if (list.has(topic)) return false
    list.add(topic)
  } else if (list.includes(topic)) return false
  else if (list.length < SMALL_TOPICS) list.push(topic)
  else session.topics = new Set(list).add(topic)
  if (session.ws) subscribe(session, session.ws, topic)
  return true
}

/** The session no longer follows the topic; false when it did not. */
export function unfollow(session: GatewaySession, topic: string): boolean {
  const list = session.topics
  let followed: boolean
  if (Array.isArray(list)) {
    const at = list.indexOf(topic)
    followed = at >= 0
    if (followed) list.splice(at, 1)
  } else followed = list.delete(topic)
  if (session.ws) unsubscribe(session, session.ws, topic)
  return followed
}

/** A socket takes the session (Identify or Resume): it follows the session's topics from now on. */
export function attach(session: GatewaySession, ws: Socket, compressed: boolean): void {
  detach(session)
  session.ws = ws
  session.compressed = compressed
  for (const topic of session.topics) subscribe(session, ws, topic)
}

/** The session's socket is gone (or replaced): it no longer follows anything. */
export function detach(session: GatewaySession): void {
  const ws = session.ws
  if (!ws) return
  for (const topic of session.topics) if (deliveredHere(session, topic)) unsubscribe(session, ws, topic)
  session.ws = null
  session.compressed = false
}

/**
 * The topic of the dispatches meant for one session alone (kept for its Resume; never a native subscription): the
 * session's id itself, which no other topic can be (theirs all start with a `kind:`), so it costs no string of its own.
 */
export function ownTopic(sessionId: string): string {
  return sessionId
}
