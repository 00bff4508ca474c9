// Gateway sessions: live or resumable, with the topics they follow. Indexed by user and by auth session
// so domains can change subscriptions and end sessions without knowing about sockets.
import type { ServerWebSocket } from 'bun'
import type { Caller } from '../core/caller'

export type Socket = ServerWebSocket<unknown>

export type GatewaySession = {
  id: string
  caller: Caller
  topics: Set<string>
  ws: Socket | null
  /** clock.now() after which a disconnected session can no longer resume */
  resumableUntil: number
  /** The sequence of the session's READY: a resume never replays what came before it. */
  readySeq: number
}

export const sessions = new Map<string, GatewaySession>()
const byUser = new Map<string, Set<GatewaySession>>()

export function addSession(session: GatewaySession): void {
  sessions.set(session.id, session)
  let set = byUser.get(session.caller.userId)
  if (!set) byUser.set(session.caller.userId, (set = new Set()))
  set.add(session)
}

export function removeSession(session: GatewaySession): void {
  sessions.delete(session.id)
  const set = byUser.get(session.caller.userId)
  set?.delete(session)
  if (set?.size === 0) byUser.delete(session.caller.userId)
}

export function sessionsOfUser(userId: string): Iterable<GatewaySession> {
  return byUser.get(userId) ?? []
}

export function sessionsOfAuthSession(authSessionId: string): GatewaySession[] {
  const out: GatewaySession[] = []
  for (const s of sessions.values()) if (s.caller.kind === 'user' && s.caller.sessionId === authSessionId) out.push(s)
  return out
}

export function follow(session: GatewaySession, topic: string): void {
  session.topics.add(topic)
  session.ws?.subscribe(topic)
}

export function unfollow(session: GatewaySession, topic: string): void {
  session.topics.delete(topic)
  session.ws?.unsubscribe(topic)
}

/** The topic every session listens on for dispatches meant for it alone. */
export function ownTopic(sessionId: string): string {
  return `gw:${sessionId}`
}
