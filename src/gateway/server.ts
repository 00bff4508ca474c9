// The Discord Gateway at /gateway: Hello, Identify, Heartbeat, Resume, Dispatch; and the EventBus domains publish to.
// Fan-out uses Bun's native pub/sub: one publish per event, identical bytes to every subscribed socket. Sockets that
// asked for zlib-stream compression need bytes of their own (one zlib context each): they are not subscribed to the
// native topics, and each dispatch is deflated for each of them (compressedByTopic); plain sockets pay nothing for it.
import type { Server } from 'bun'
import { Elysia } from 'elysia'
import { config } from '../config'
import { resolveAuthorization, type Caller } from '../core/caller'
import { clock } from '../core/clock'
import { ipKey, type IpKey } from '../core/ip-key'
import { log } from '../core/log'
import { countEventPublished } from '../core/metrics'
import { clientIp } from '../http/client-ip'
import { randomBytes } from 'node:crypto'
import {
  getAuthSessionCheck,
  identifyHooks,
  installBus,
  opHandlers,
  sessionEndHooks,
  sessionStartHooks,
  topics,
  type EventBus,
  type GatewayConnection,
} from './bus'
import {
  ACCEPTED_NOOP_OPS,
  Close,
  IDENTIFY_TIMEOUT_MS,
  MAX_INBOUND_BYTES,
  MAX_PENDING_PER_IP,
  Op,
  QOS_HEARTBEAT,
  frame,
  framesPerWindow,
  FRAME_WINDOW_MS,
} from './protocol'
import { currentSeq, lastSeqFor, nextSeq, remember, replaySince } from './replay'
import {
  addSession,
  attach,
  compressedByTopic,
  detach,
  follow,
  ownTopic,
  removeSession,
  sessions,
  sessionsOfAuthSession,
  sessionsOfUser,
  unfollow,
  type GatewaySession,
  type Socket,
} from './sessions'
import { ZlibStream } from './zlib-stream'

type Connection = {
  session?: GatewaySession
  heartbeatTimer?: Timer
  closing?: boolean
  identifying?: boolean
  /** clock.now() at Hello: Identify or Resume must come within IDENTIFY_TIMEOUT_MS. */
  openedAt: number
  /** Set while the socket is not yet identified: it counts against its IP's pending sockets. */
  pendingIp?: IpKey
  /** Frames received in the current window (FRAME_WINDOW_MS from windowStart). */
  frames: number
  windowStart: number
  /** `?compress=zlib-stream`: every frame to this socket goes through its own zlib context. */
  zlib?: ZlibStream
}

// Unidentified sockets per client IP: a flood of idle sockets is refused at the door.
const pendingByIp = new Map<IpKey, number>()

function settlePending(conn: Connection): void {
  const ip = conn.pendingIp
  if (ip === undefined) return
  conn.pendingIp = undefined
  const left = (pendingByIp.get(ip) ?? 1) - 1
  if (left > 0) pendingByIp.set(ip, left)
  else pendingByIp.delete(ip)
}

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

/** A frame to one socket, deflated when the socket asked for zlib-stream. */
function send(ws: Socket, payload: string): void {
  const zlib = connections.get(ws)?.zlib
  if (zlib) zlib.send(payload)
  else ws.send(payload)
}

function dispatch(topicList: string[], type: string, data: unknown, replayable = true): void {
  const seq = nextSeq()
  const payload = frame(Op.Dispatch, data, seq, type)
  if (replayable) remember({ seq, topics: topicList, payload })
  countEventPublished()
  if (!server) return
  for (const topic of topicList) server.publish(topic, payload)
  if (compressedByTopic.size > 0) dispatchCompressed(topicList, payload)
}

/** The compressed sockets following any of the topics, each once. */
function dispatchCompressed(topicList: string[], payload: string): void {
  let seen: Set<GatewaySession> | undefined
  for (const topic of topicList) {
    const followers = compressedByTopic.get(topic)
    if (!followers) continue
    for (const session of followers) {
      if (topicList.length > 1) {
        if (seen?.has(session)) continue
        ;(seen ??= new Set()).add(session)
      }
      if (session.ws) send(session.ws, payload)
    }
  }
}

function sendDirect(session: GatewaySession, type: string, data: unknown, replayable = true): void {
  dispatch([ownTopic(session.id)], type, data, replayable)
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
  detach(session)
  if (ws && code !== undefined) close(ws, code, reason ?? '')
  const view = connectionView(session)
  for (const hook of sessionEndHooks)
    Promise.resolve(hook(view)).catch((e) => log.error('session end hook failed', { error: String(e) }))
}

let sweeps = 0
const AUTH_CHECK_EVERY = 5 // sweeps (seconds)

function sweepExpired(): void {
  const now = clock.now()
  for (const s of sessions.values()) if (!s.ws && s.resumableUntil <= now) endSession(s)
  for (const [ws, conn] of connections) {
    if (!conn.session && !conn.closing && !conn.identifying && now - conn.openedAt >= IDENTIFY_TIMEOUT_MS)
      close(ws, Close.NotAuthenticated, 'Not authenticated')
  }
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
    for (const s of userSessions)
      if (!alive.has((s.caller as { sessionId: string }).sessionId)) endSession(s, 4004, 'Authentication failed')
  } catch (error) {
    log.error('auth session check failed', { error: String(error) })
  }
}

function connectionView(session: GatewaySession): GatewayConnection {
  return { caller: session.caller, sessionId: session.id, send: (type, data) => sendDirect(session, type, data) }
}

/** Close a socket; a compressed one first gets the frames already queued for it (e.g. AUTH_SESSION_CHANGE). */
function close(ws: Socket, code: number, reason: string): void {
  const conn = connections.get(ws)
  if (conn) conn.closing = true
  if (conn?.zlib) conn.zlib.whenFlushed(() => ws.close(code, reason))
  else ws.close(code, reason)
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
  if (caller.kind === 'user') list.push(topics.session(caller.sessionId), topics.account(caller.userId))
  return list
}

/** OAuth2 tokens reach the Gateway only with identify and gateway.connect (WIRE §2). */
function mayConnect(caller: Caller): boolean {
  return caller.kind !== 'bearer' || (caller.scopes.includes('identify') && caller.scopes.includes('gateway.connect'))
}

async function identify(ws: Socket, conn: Connection, d: any): Promise<void> {
  if (typeof d?.token !== 'string') return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  const caller = await resolveAuthorization(d.token, { bare: true })
  if (!caller || !mayConnect(caller)) return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  if (conn.session || conn.closing) return
  const session: GatewaySession = {
    id: randomBytes(16).toString('hex'),
    caller,
    topics: new Set(),
    ws: null,
    resumableUntil: 0,
    readySeq: 0,
  }
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
  settlePending(conn)
  attach(session, ws, conn.zlib !== undefined)
  conn.session = session
  session.readySeq = currentSeq() + 1
  addSession(session)
  for (const topic of [...baseTopics(caller, session.id), ...extraTopics]) follow(session, topic)
  ready.v = (ws.data as { version?: number })?.version ?? 9
  // Not kept for Resume (a resume replays only what came after READY): a READY of a few KB per session would otherwise
  // sit in the replay buffer for each of thousands of sessions.
  sendDirect(session, 'READY', ready, false)
  const view = connectionView(session)
  for (const hook of sessionStartHooks)
    Promise.resolve(hook(view)).catch((e) => log.error('session start hook failed', { error: String(e) }))
}

async function resume(ws: Socket, conn: Connection, d: any): Promise<void> {
  const session = typeof d?.session_id === 'string' ? sessions.get(d.session_id) : undefined
  const caller = typeof d?.token === 'string' ? await resolveAuthorization(d.token, { bare: true }) : undefined
  const sameCaller =
    caller &&
    mayConnect(caller) &&
    session &&
    caller.kind === session.caller.kind &&
    caller.userId === session.caller.userId
  // seq is the last one the client saw: a non-negative integer no later than the last dispatch of this session.
  // Replay starts after it, and never before the session's own READY.
  const seq = d?.seq === null ? 0 : d?.seq
  const validSeq =
    Number.isSafeInteger(seq) &&
    seq >= 0 &&
    session !== undefined &&
    seq <= lastSeqFor(session.topics, session.readySeq)
  const replay = session && sameCaller && validSeq ? replaySince(Math.max(seq, session.readySeq), session.topics) : null
  if (!session || !sameCaller || !replay || (!session.ws && session.resumableUntil <= clock.now())) {
    send(ws, frame(Op.InvalidSession, false))
    return
  }
  // A client may reconnect before we noticed its old socket die: the new socket takes over.
  if (session.ws && session.ws !== ws) {
    const old = session.ws
    const oldConn = connections.get(old)
    if (oldConn) oldConn.session = undefined
    close(old, Close.SessionTimedOut, 'Session resumed elsewhere')
  }
  settlePending(conn)
  attach(session, ws, conn.zlib !== undefined)
  conn.session = session
  for (const entry of replay) send(ws, entry.payload)
  sendDirect(session, 'RESUMED', { _trace: ['lobby-server'] })
}

async function onMessage(ws: Socket, message: unknown): Promise<void> {
  const conn = connections.get(ws)
  if (!conn || conn.closing) return
  const now = clock.now()
  if (now - conn.windowStart >= FRAME_WINDOW_MS) {
    conn.windowStart = now
    conn.frames = 0
  }
  conn.frames += 1
  if (conn.frames > framesPerWindow(config().gatewayHeartbeatMs))
    return close(ws, Close.RateLimited, 'You are being rate limited.')
  if (
    typeof message !== 'object' ||
    message === null ||
    Array.isArray(message) ||
    Buffer.isBuffer(message) ||
    message instanceof Uint8Array
  ) {
    return close(ws, Close.DecodeError, 'Decode error')
  }
  if (JSON.stringify(message).length > MAX_INBOUND_BYTES) return close(ws, Close.DecodeError, 'Payload too large')
  const { op, d } = message as { op?: unknown; d?: unknown }
  if (typeof op !== 'number') return close(ws, Close.DecodeError, 'Decode error')
  if (op === Op.Heartbeat || op === QOS_HEARTBEAT) {
    armHeartbeat(ws, conn)
    send(ws, frame(Op.HeartbeatAck, null))
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
  settlePending(conn)
  clearTimeout(conn.heartbeatTimer)
  conn.zlib?.end()
  const session = conn.session
  if (!session || session.ws !== ws) return
  detach(session)
  // 1000/1001 from the client end the session; anything else leaves it resumable for a while.
  if (code === 1000 || code === 1001) endSession(session)
  else session.resumableUntil = clock.now() + config().gatewayResumeWindowMs
}

/** Ask a user's live sockets to reconnect and resume (op 7), e.g. before moving them; sessions stay resumable. */
export function requestReconnect(userId: string): void {
  for (const s of sessionsOfUser(userId)) if (s.ws) send(s.ws, frame(Op.Reconnect, null))
}

/** Close every live socket with 1001 (server going away); used on shutdown. */
export function closeAllGatewaySockets(): void {
  for (const ws of [...connections.keys()]) close(ws, 1001, 'Server shutting down')
  clearInterval(sweeper)
  sweeper = undefined
}

export const gatewaySocket = new Elysia({ name: 'gateway-socket' }).ws('/gateway', {
  detail: { hide: true },
  open(ws) {
    const raw = ws.raw as Socket
    const query = (ws.data as { query?: Record<string, string | undefined> }).query ?? {}
    const version = Number(query.v ?? 9)
    const now = clock.now()
    const conn: Connection = { openedAt: now, frames: 0, windowStart: now }
    // Discord's transport compression; other values (zstd-stream) are not offered: those clients get plain text frames.
    if (query.compress === 'zlib-stream') conn.zlib = new ZlibStream((bytes) => raw.send(bytes))
    connections.set(raw, conn)
    ;(raw.data as { version?: number }).version = version
    const request = (ws.data as { request?: Request }).request
    const ip = ipKey(
      request ? clientIp(request, { requestIP: () => ({ address: raw.remoteAddress }) }) : raw.remoteAddress,
    )
    const pending = pendingByIp.get(ip) ?? 0
    if (pending >= MAX_PENDING_PER_IP) return close(raw, Close.RateLimited, 'Too many unidentified connections')
    pendingByIp.set(ip, pending + 1)
    conn.pendingIp = ip
    if (version !== 9 && version !== 10) return close(raw, Close.InvalidApiVersion, 'Invalid API version')
    if (query.encoding && query.encoding !== 'json')
      return close(raw, Close.DecodeError, 'Only JSON encoding is supported')
    send(raw, frame(Op.Hello, { heartbeat_interval: config().gatewayHeartbeatMs, _trace: ['lobby-server'] }))
    armHeartbeat(raw, conn)
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

/** Open sockets and live sessions (the /metrics gauges). */
export function gatewayStats() {
  return { connections: connections.size, sessions: sessions.size, seq: currentSeq() }
}
