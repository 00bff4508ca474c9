// The Discord Gateway at /gateway: Hello, Identify, Heartbeat, Resume, Dispatch; and the EventBus domains publish to.
// Fan-out uses Bun's native pub/sub: one publish per event, identical bytes to every subscribed socket.
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { config } from '../config'
import { resolveAuthorization, type Caller } from '../core/caller'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { randomBytes } from 'node:crypto'
import { getAuthSessionCheck, identifyHooks, installBus, opHandlers, sessionEndHooks, topics, type EventBus, type GatewayConnection } from './bus'
import { ACCEPTED_NOOP_OPS, Close, MAX_INBOUND_BYTES, Op, QOS_HEARTBEAT, frame } from './protocol'
import { currentSeq, nextSeq, remember, replaySince } from './replay'
import {
  addSession, follow, ownTopic, removeSession, sessions, sessionsOfAuthSession, sessionsOfUser, unfollow,
  type GatewaySession, type Socket,
} from './sessions'

type Connection = { session?: GatewaySession; heartbeatTimer?: Timer; closing?: boolean; identifying?: boolean }

const connections = new Map<Socket, Connection>()
let server: Server<unknown> | null = null
let sweeper: Timer | undefined

/** The Bun server to publish through; set once the app listens. */
export function attachGateway(bunServer: Server<unknown>): void {
  server = bunServer
  sweeper ??= setInterval(sweepExpired, 1000)
  sweeper.unref?.()
}

export function gatewayUrl(): string {
  return `${config().baseUrl.replace(/^http/, 'ws')}/gateway`
}

function dispatch(topicList: string[], type: string, data: unknown): void {
  const seq = nextSeq()
  const payload = frame(Op.Dispatch, data, seq, type)
  remember({ seq, topics: topicList, payload })
  if (!server) return
  for (const topic of topicList) server.publish(topic, payload)
}

function sendDirect(session: GatewaySession, type: string, data: unknown): void {
  dispatch([ownTopic(session.id)], type, data)
}

export const bus: EventBus = {
  publish(topicOrTopics, type, data) {
    dispatch(Array.isArray(topicOrTopics) ? topicOrTopics : [topicOrTopics], type, data)
  },
  subscribeUser(userId, topic) {
    for (const s of sessionsOfUser(userId)) follow(s, topic)
  },
  unsubscribeUser(userId, topic) {
    for (const s of sessionsOfUser(userId)) unfollow(s, topic)
  },
  closeAuthSession(authSessionId, code, reason = 'Authentication failed') {
    for (const s of sessionsOfAuthSession(authSessionId)) endSession(s, code, reason)
  },
  closeUser(userId, code, reason = 'Authentication failed') {
    for (const s of [...sessionsOfUser(userId)]) endSession(s, code, reason)
  },
  changeAuthSession(oldAuthSessionId, next) {
    for (const s of sessionsOfAuthSession(oldAuthSessionId)) {
      unfollow(s, topics.session(oldAuthSessionId))
      s.caller = next
      follow(s, topics.session(next.sessionId))
      sendDirect(s, 'AUTH_SESSION_CHANGE', { auth_session_id_hash: next.sessionIdHash })
    }
  },
}
installBus(bus)

/** End a session for good: close its socket (if live) and forget it. */
function endSession(session: GatewaySession, code?: number, reason?: string): void {
  removeSession(session)
  const ws = session.ws
  session.ws = null
  if (ws && code !== undefined) {
    const conn = connections.get(ws)
    if (conn) conn.closing = true
    ws.close(code, reason)
  }
  const view = connectionView(session)
  for (const hook of sessionEndHooks) Promise.resolve(hook(view)).catch((e) => log.error('session end hook failed', { error: String(e) }))
}

let sweeps = 0
const AUTH_CHECK_EVERY = 5 // sweeps (seconds)

function sweepExpired(): void {
  const now = clock.now()
  for (const s of sessions.values()) if (!s.ws && s.resumableUntil <= now) endSession(s)
  sweeps += 1
  if (sweeps % AUTH_CHECK_EVERY === 0) void closeEndedAuthSessions()
}

/** Close user connections whose auth session no longer exists (ended by another process or expired). */
export async function closeEndedAuthSessions(): Promise<void> {
  const check = getAuthSessionCheck()
  if (!check) return
  const userSessions = [...sessions.values()].filter((s) => s.caller.kind === 'user')
  if (!userSessions.length) return
  const ids = [...new Set(userSessions.map((s) => (s.caller as { sessionId: string }).sessionId))]
  try {
    const alive = await check(ids)
    for (const s of userSessions) if (!alive.has((s.caller as { sessionId: string }).sessionId)) endSession(s, 4004, 'Authentication failed')
  } catch (error) {
    log.error('auth session check failed', { error: String(error) })
  }
}

function connectionView(session: GatewaySession): GatewayConnection {
  return { caller: session.caller, sessionId: session.id, send: (type, data) => sendDirect(session, type, data) }
}

function close(ws: Socket, code: number, reason: string): void {
  const conn = connections.get(ws)
  if (conn) conn.closing = true
  ws.close(code, reason)
}

function armHeartbeat(ws: Socket, conn: Connection): void {
  clearTimeout(conn.heartbeatTimer)
  const interval = config().gatewayHeartbeatMs
  // The first beat is jittered over a whole interval; allow half an interval more for latency.
  conn.heartbeatTimer = setTimeout(() => close(ws, Close.SessionTimedOut, 'Session timed out'), interval * 1.5)
}

/** Topics a caller's session follows before the domains add theirs. */
function baseTopics(caller: Caller, sessionId: string): string[] {
  const list = [ownTopic(sessionId)]
  if (caller.kind === 'bot') list.push(topics.app(caller.applicationId))
  else list.push(topics.user(caller.userId))
  if (caller.kind === 'user') list.push(topics.session(caller.sessionId))
  return list
}

async function identify(ws: Socket, conn: Connection, d: any): Promise<void> {
  if (typeof d?.token !== 'string') return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  const caller = await resolveAuthorization(d.token, { bareMayBeBot: true })
  if (!caller) return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  if (conn.session || conn.closing) return
  const session: GatewaySession = { id: randomBytes(16).toString('hex'), caller, topics: new Set(), ws: null, resumableUntil: 0 }
  const ready: Record<string, unknown> = {
    v: 9,
    user: null,
    guilds: [],
    session_id: session.id,
    session_type: caller.kind === 'bearer' ? 'oauth' : 'normal',
    resume_gateway_url: gatewayUrl(),
    ...(caller.kind === 'user' ? { auth_session_id_hash: caller.sessionIdHash } : {}),
    ...(caller.kind === 'bearer' ? { scopes: caller.scopes } : {}),
    ...(caller.kind !== 'user' ? { application: { id: caller.applicationId, flags: 0 } } : {}),
  }
  const extraTopics: string[] = []
  for (const hook of identifyHooks) {
    const contribution = await hook(caller)
    if (contribution.ready) Object.assign(ready, contribution.ready)
    if (contribution.topics) extraTopics.push(...contribution.topics)
  }
  if (ws.readyState !== 1) return // closed while we were loading
  session.ws = ws
  conn.session = session
  addSession(session)
  for (const topic of [...baseTopics(caller, session.id), ...extraTopics]) follow(session, topic)
  ready.v = (ws.data as { version?: number })?.version ?? 9
  sendDirect(session, 'READY', ready)
}

async function resume(ws: Socket, conn: Connection, d: any): Promise<void> {
  const session = typeof d?.session_id === 'string' ? sessions.get(d.session_id) : undefined
  const caller = typeof d?.token === 'string' ? await resolveAuthorization(d.token, { bareMayBeBot: true }) : undefined
  const sameCaller = caller && session && caller.kind === session.caller.kind && caller.userId === session.caller.userId
  const seq = Number.isInteger(d?.seq) ? (d.seq as number) : 0
  const replay = session && sameCaller ? replaySince(seq, session.topics) : null
  if (!session || !sameCaller || !replay || (!session.ws && session.resumableUntil <= clock.now())) {
    ws.send(frame(Op.InvalidSession, false))
    return
  }
  // A client may reconnect before we noticed its old socket die: the new socket takes over.
  if (session.ws && session.ws !== ws) {
    const old = session.ws
    const oldConn = connections.get(old)
    if (oldConn) oldConn.session = undefined
    close(old, Close.SessionTimedOut, 'Session resumed elsewhere')
  }
  session.ws = ws
  conn.session = session
  for (const topic of session.topics) ws.subscribe(topic)
  for (const entry of replay) ws.send(entry.payload)
  sendDirect(session, 'RESUMED', { _trace: ['lobby-server'] })
}

async function onMessage(ws: Socket, message: unknown): Promise<void> {
  const conn = connections.get(ws)
  if (!conn || conn.closing) return
  if (typeof message !== 'object' || message === null || Array.isArray(message) || Buffer.isBuffer(message) || message instanceof Uint8Array) {
    return close(ws, Close.DecodeError, 'Decode error')
  }
  if (JSON.stringify(message).length > MAX_INBOUND_BYTES) return close(ws, Close.DecodeError, 'Payload too large')
  const { op, d } = message as { op?: unknown; d?: unknown }
  if (typeof op !== 'number') return close(ws, Close.DecodeError, 'Decode error')
  if (op === Op.Heartbeat || op === QOS_HEARTBEAT) {
    armHeartbeat(ws, conn)
    ws.send(frame(Op.HeartbeatAck, null))
    return
  }
  if (op === Op.Identify || op === Op.Resume) {
    if (conn.session || conn.identifying) return close(ws, Close.AlreadyAuthenticated, 'Already authenticated')
    conn.identifying = true
    try {
      return await (op === Op.Identify ? identify(ws, conn, d) : resume(ws, conn, d))
    } finally {
      conn.identifying = false
    }
  }
  const handler = opHandlers.get(op)
  if (!handler && !ACCEPTED_NOOP_OPS.has(op)) return close(ws, Close.UnknownOpcode, 'Unknown opcode')
  if (!conn.session) return close(ws, Close.NotAuthenticated, 'Not authenticated')
  if (handler) await handler(connectionView(conn.session), d)
}

function onClose(ws: Socket, code: number): void {
  const conn = connections.get(ws)
  connections.delete(ws)
  if (!conn) return
  clearTimeout(conn.heartbeatTimer)
  const session = conn.session
  if (!session || session.ws !== ws) return
  session.ws = null
  // 1000/1001 from the client end the session; anything else leaves it resumable for a while.
  if (code === 1000 || code === 1001) endSession(session)
  else session.resumableUntil = clock.now() + config().gatewayResumeWindowMs
}

/** Ask a user's live sockets to reconnect and resume (op 7), e.g. before moving them; sessions stay resumable. */
export function requestReconnect(userId: string): void {
  for (const s of sessionsOfUser(userId)) s.ws?.send(frame(Op.Reconnect, null))
}

/** Close every live socket with 1001 (server going away); used on shutdown. */
export function closeAllGatewaySockets(): void {
  for (const ws of [...connections.keys()]) close(ws, 1001, 'Server shutting down')
  clearInterval(sweeper)
  sweeper = undefined
}

export const gatewaySocket = new Elysia({ name: 'gateway-socket' }).ws('/gateway', {
  detail: { hide: true },
  // Bun refuses frames over this outright; between 15 KiB and this we answer Discord's 4002.
  maxPayloadLength: 64 * 1024,
  idleTimeout: 0,
  open(ws) {
    const raw = ws.raw as Socket
    const query = (ws.data as { query?: Record<string, string | undefined> }).query ?? {}
    const version = Number(query.v ?? 9)
    connections.set(raw, {})
    ;(raw.data as { version?: number }).version = version
    if (version !== 9 && version !== 10) return close(raw, Close.InvalidApiVersion, 'Invalid API version')
    if (query.encoding && query.encoding !== 'json') return close(raw, Close.DecodeError, 'Only JSON encoding is supported')
    raw.send(frame(Op.Hello, { heartbeat_interval: config().gatewayHeartbeatMs, _trace: ['lobby-server'] }))
    armHeartbeat(raw, connections.get(raw)!)
  },
  async message(ws, message) {
    const raw = ws.raw as Socket
    try {
      await onMessage(raw, message)
    } catch (error) {
      log.error('gateway message failed', { error: String(error) })
      close(raw, Close.UnknownError, 'Unknown error')
    }
  },
  close(ws, code) {
    onClose(ws.raw as Socket, code)
  },
})

export function gatewayStats() {
  return { connections: connections.size, sessions: sessions.size, seq: currentSeq() }
}
