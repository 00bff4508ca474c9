// The Discord Gateway at /gateway: Hello, Identify, Heartbeat, Resume, Dispatch; and the EventBus domains publish to.
// Fan-out uses Bun's native pub/sub: one publish per event, identical bytes to every subscribed socket. The Gateway
// delivers some topics itself (deliveredByTopic): every topic for sockets that asked for zlib-stream compression (they
// need bytes of their own, one zlib context each: each dispatch is deflated for each of them), and the private topics
// of one user (a native topic each cost ~1 KB per socket, measured); plain sockets pay nothing for the first.
import { perApp } from '../core/app-context'
import type { Server } from 'bun'
import { config } from '../config'
import { resolveAuthorization, sameCredential, type Caller } from '../core/caller'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { ipKey, type IpKey } from '../core/ip-key'
import { log } from '../core/log'
import { countEventPublished } from '../core/metrics'
import { checkForeignCommits, foreignCommitsSeen } from '../db/cache'
import { type CommitHolder, holdForCommit, settledCommits } from '../db/client'
import { beginTrace, errorResponse, finish } from '../http/basics'
import { clientIp } from '../http/client-ip'
import { randomBytes } from 'node:crypto'
import {
  type Audience,
  type GatewayLogPort,
  type LoggedEntry,
  installBus,
  wiring,
  isPrivateTopic,
  type SessionCall,
  type SessionRecord,
  sees,
  topics,
  type EventBus,
  type CloseHook,
  type GatewayConnection,
} from './bus'
import {
  ACCEPTED_NOOP_OPS,
  Close,
  IDENTIFY_TIMEOUT_MS,
  identifyShard,
  MAX_INBOUND_BYTES,
  MAX_PENDING_PER_IP,
  Op,
  QOS_HEARTBEAT,
  Serialized,
  frame,
  framesPerWindow,
  FRAME_WINDOW_MS,
} from './protocol'
import {
  advanceSeq,
  currentSeq,
  lastSeqFor,
  nextSeq,
  remember,
  replaySince,
  replayStats,
  setReplayLimit,
} from './replay'
import {
  addSession,
  attach,
  topicFollowers,
  detach,
  follow,
  ownTopic,
  removeSession,
  allSessions,
  sessionsOfAuthSession,
  sessionsOfUser,
  unfollow,
  type GatewaySession,
  type Socket,
} from './sessions'
import { ZlibStream } from './zlib-stream'

/**
 * What Bun keeps with each Gateway socket (its `data`): what the upgrade read and the connection's state, one object.
 * Elysia's app-wide WebSocket handler calls the data's open, message and close: the class's, shared by every socket.
 */
class Connection {
  session?: GatewaySession = undefined
  /** performance.now() by which the next heartbeat must arrive (the sweep closes the socket after it). */
  beatBy = heartbeatDeadline()
  /** Closing or closed: nothing more is handled. */
  closing = false
  /** Closed by this node going away (several nodes): the session stays resumable, on any node. */
  leaving = false
  identifying = false
  /** clock.now() at the upgrade: Identify or Resume must come within IDENTIFY_TIMEOUT_MS. */
  readonly openedAt = clock.now()
  /** Frames received in the current window (FRAME_WINDOW_MS from windowStart). */
  frames = 0
  windowStart = this.openedAt
  /** `?compress=zlib-stream`: every frame to this socket goes through its own zlib context. */
  zlib?: ZlibStream = undefined
  /** While a message is being handled (handlers await the stores): the ones that came since, handled next in order. */
  backlog?: unknown[] = undefined

  constructor(
    readonly version: number,
    /** The client's address (IPv6 by its /64) while the socket is unidentified and counts against its IP's limit. */
    public pendingIp: IpKey | undefined,
    /** Asked for `?compress=zlib-stream`. */
    readonly compress: boolean,
    /** Asked for an encoding other than JSON (closed at open). */
    readonly badEncoding: boolean,
  ) {}

  open(ws: Socket): void {
    onOpen(ws, this)
  }

  message(ws: Socket, message: string | Buffer): void {
    onRawMessage(ws, this, message)
  }

  close(ws: Socket, code: number): void {
    onClose(ws, this, code)
  }
}

const connectionOf = (ws: Socket) => ws.data as Connection

/** What this module holds per service (core/app-context.ts). */
const gw = perApp(() => ({
  // Unidentified sockets per client IP: a flood of idle sockets is refused at the door.
  pendingByIp: new Map<IpKey, number>(),
  connections: new Set<Socket>(),
  server: null as Server<unknown> | null,
  sweeper: undefined as Timer | undefined,
  /**
   * Several nodes (cluster/gateway.ts): what the bus is given goes to the cluster's log, which sequences it and hands it
   * back to every node in order (applyLogged); undefined: one server, which sequences and delivers at once.
   */
  logPort: undefined as GatewayLogPort | undefined,
  sweeps: 0,
  commitsChecked: 0,
}))

function settlePending(conn: Connection): void {
  const st = gw()
  const ip = conn.pendingIp
  if (ip === undefined) return
  conn.pendingIp = undefined
  const left = (st.pendingByIp.get(ip) ?? 1) - 1
  if (left > 0) st.pendingByIp.set(ip, left)
  else st.pendingByIp.delete(ip)
}

/** The Bun server to publish through; set once the app listens. */
export function attachGateway(bunServer: Server<unknown>): void {
  const st = gw()
  st.server = bunServer
  setReplayLimit(config().gatewayReplayBytes)
  st.sweeper ??= setInterval(sweepExpired, 1000)
  st.sweeper.unref?.()
}

export function gatewayUrl(): string {
  return `${config().baseUrl.replace(/^http/, 'ws')}/gateway`
}

/** A frame to one socket, deflated when the socket asked for zlib-stream. */
function send(ws: Socket, payload: string): void {
  const zlib = connectionOf(ws).zlib
  if (zlib) zlib.send(payload)
  else ws.send(payload)
}

/** Send the bus's dispatches and calls through the cluster's log from now on (undefined: back to this process). */
export function useGatewayLog(port: GatewayLogPort | undefined): void {
  gw().logPort = port
}

/** The dispatch frame with the next sequence, kept for Resume under `topicList` when replayable, and counted. */
function stamp(topicList: string[], type: string, data: unknown, replayable: boolean): string {
  const seq = nextSeq()
  const payload = frame(Op.Dispatch, data, seq, type)
  if (replayable) remember({ seq, topics: topicList, payload })
  countEventPublished()
  return payload
}

function dispatch(topicList: string[], type: string, data: unknown, replayable = true): void {
  deliver(topicList, stamp(topicList, type, data, replayable))
}

/** A sequenced frame to every socket here that follows any of the topics. */
function deliver(topicList: string[], payload: string): void {
  const st = gw()
  if (!st.server) return
  for (const topic of topicList) if (!isPrivateTopic(topic)) st.server.publish(topic, payload)
  if (topicFollowers().size > 0) deliverHere(topicList, payload)
}

/** The sessions the Gateway delivers to itself that follow any of the topics, each once. */
function deliverHere(topicList: string[], payload: string): void {
  let seen: Set<GatewaySession> | undefined
  for (const topic of topicList) {
    const followers = topicFollowers().get(topic)
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

/**
 * A dispatch for one session: kept for its Resume under its own topic, sent straight to its socket if live. With
 * several nodes it goes through the log like every dispatch (its sequence is the log's), except what is not kept for
 * Resume (READY and what comes with it): that is sent at once with the last sequence applied here.
 */
function sendDirect(session: GatewaySession, type: string, data: unknown, replayable = true): void {
  const st = gw()
  if (st.logPort) {
    if (replayable) return st.logPort.dispatch([ownTopic(session.id)], type, jsonOf(data))
    if (session.ws) send(session.ws, frame(Op.Dispatch, data, currentSeq(), type))
    return
  }
  const payload = stamp([ownTopic(session.id)], type, data, replayable)
  if (session.ws) send(session.ws, payload)
}

const jsonOf = (data: unknown) => (data instanceof Serialized ? data.json : JSON.stringify(data))

/** Those sessions of a user that see `audience`. */
const audienceOf = (userId: string, audience: Audience) =>
  sessionsOfUser(userId).filter((s) => sees(s.caller, audience))

/**
 * What the bus's session calls do to this process's sessions (`seq`: the log entry that carried the call, whose
 * sequence a frame it sends takes).
 */
function applyCall(call: SessionCall, seq?: number): void {
  switch (call.kind) {
    case 'subscribe-user':
      return changeTopics([call.userId], [call.topic], call.audience)
    case 'unsubscribe-user':
      return changeTopics([call.userId], [call.topic])
    case 'subscribe-users':
      return changeTopics(call.userIds, call.topics, call.audience)
    case 'unsubscribe-users':
      return changeTopics(call.userIds, call.topics)
    case 'take-session': {
      const held = allSessions().get(call.sessionId)
      if (held && call.node !== gw().logPort?.sessions.node)
        endSession(held, Close.SessionTimedOut, 'Session resumed elsewhere', true)
      return
    }
    case 'close-auth-session':
      for (const s of sessionsOfAuthSession(call.authSessionId))
        endSession(s, call.code, call.reason ?? 'Authentication failed')
      return
    case 'close-user':
      for (const s of [...sessionsOfUser(call.userId)]) endSession(s, call.code, call.reason ?? 'Authentication failed')
      return
    case 'close-grants':
      for (const s of [...sessionsOfUser(call.userId)])
        if (grantEnds(s.caller, call.which)) endSession(s, call.code, call.reason ?? 'Authentication failed')
      return
    case 'change-auth-session': {
      const { oldAuthSessionId, next } = call
      const moved = sessionsOfAuthSession(oldAuthSessionId)
      const change = { auth_session_id_hash: next.sessionIdHash }
      // From the log: one frame with the entry's sequence for every session it moves, kept once for their Resume.
      const payload = seq === undefined ? undefined : frame(Op.Dispatch, change, seq, 'AUTH_SESSION_CHANGE')
      for (const s of moved) {
        unfollow(s, topics.session(oldAuthSessionId))
        s.caller = next
        follow(s, topics.session(next.sessionId))
        saveSession(s)
        if (payload === undefined) sendDirect(s, 'AUTH_SESSION_CHANGE', change)
        else if (s.ws) send(s.ws, payload)
      }
      if (payload !== undefined && moved.length > 0)
        remember({ seq: seq!, topics: moved.map((s) => ownTopic(s.id)), payload })
    }
  }
}

/**
 * These users' sessions here follow the topics (those that see `audience`), or with no audience follow them no more;
 * a session whose topics changed is saved once for the call, however many topics it names.
 */
function changeTopics(userIds: readonly string[], topicList: readonly string[], audience?: Audience): void {
  for (const userId of userIds)
    for (const s of audience ? audienceOf(userId, audience) : sessionsOfUser(userId)) {
      let changed = false
      for (const topic of topicList) if (audience ? follow(s, topic) : unfollow(s, topic)) changed = true
      if (changed) saveSession(s)
    }
}

/** Whether a `close-grants` call ends a session identified as `caller`. */
function grantEnds(caller: Caller, which: { familyId: string } | { applicationId: string }): boolean {
  if (caller.kind !== 'bearer') return false
  return 'familyId' in which
    ? caller.familyId === which.familyId
    : which.applicationId === '*' || caller.applicationId === which.applicationId
}

/** Several nodes: keep what another node needs to resume this session (at Identify, at each change of it). */
function saveSession(session: GatewaySession): void {
  gw().logPort?.sessions.save({
    id: session.id,
    caller: session.caller,
    topics: [...session.topics],
    readySeq: session.readySeq,
  })
}

/** A call of the bus: to the cluster's log, or applied here (once committed, when given inside a transaction). */
function call(entry: SessionCall): void {
  const st = gw()
  if (st.logPort) st.logPort.call(entry)
  else atCommit(() => applyCall(entry))
}

/**
 * One server: what the bus is given inside a write transaction goes out once it commits (never if it rolls back).
 * Several nodes: cluster/outbox.ts holds it instead (an outbox row in the same transaction).
 */
const onCommit: CommitHolder<() => void> = {
  after(items) {
    for (const fn of items) fn()
  },
}
const atCommit = (fn: () => void) => {
  if (!holdForCommit(onCommit, fn)) fn()
}

/**
 * An entry of the cluster's log, applied to this node's sessions (cluster/gateway.ts calls it once per entry, in
 * sequence order): a dispatch is kept for Resume and delivered with the log's frame; a call changes sessions.
 */
export function applyLogged(seq: number, entry: LoggedEntry): void {
  advanceSeq(seq)
  switch (entry.kind) {
    case 'dispatch': {
      countEventPublished()
      remember({ seq, topics: entry.topics, payload: entry.frame })
      deliver(entry.topics, entry.frame)
      // A session's own topic (what is meant for it alone) is followed by no socket: its socket, if it is here.
      if (entry.topics.length === 1) {
        const own = allSessions().get(entry.topics[0])
        if (own?.ws) send(own.ws, entry.frame)
      }
      return
    }
    case 'user-dispatch': {
      countEventPublished()
      const to = audienceOf(entry.userId, entry.audience)
      if (to.length === 0) return
      remember({ seq, topics: to.map((s) => ownTopic(s.id)), payload: entry.frame })
      for (const s of to) if (s.ws) send(s.ws, entry.frame)
      return
    }
    default:
      applyCall(entry, seq)
  }
}

/** One server: a dispatch to those of a user's sessions here that see `audience`. */
function publishToUserHere(userId: string, audience: Audience, type: string, data: unknown): void {
  const to = audienceOf(userId, audience)
  if (to.length === 0) return
  // Serialized once however many sessions get it (a lobby snapshot can be large).
  const json = data instanceof Serialized ? data : new Serialized(JSON.stringify(data))
  for (const s of to) sendDirect(s, type, json)
}

export const bus: EventBus = {
  publish(topicOrTopics, type, data) {
    const topicList = Array.isArray(topicOrTopics) ? topicOrTopics : [topicOrTopics]
    const logPort = gw().logPort
    if (logPort) logPort.dispatch(topicList, type, jsonOf(data))
    else atCommit(() => dispatch(topicList, type, data))
  },
  publishToUser(userId, audience, type, data) {
    const logPort = gw().logPort
    if (logPort) return logPort.userDispatch(userId, audience, type, jsonOf(data))
    atCommit(() => publishToUserHere(userId, audience, type, data))
  },
  subscribeUser(userId, topic, audience) {
    call({ kind: 'subscribe-user', userId, topic, audience })
  },
  unsubscribeUser(userId, topic) {
    call({ kind: 'unsubscribe-user', userId, topic })
  },
  subscribeUsers(userIds, topicList, audience) {
    if (userIds.length && topicList.length) call({ kind: 'subscribe-users', userIds, topics: topicList, audience })
  },
  unsubscribeUsers(userIds, topicList) {
    if (userIds.length && topicList.length) call({ kind: 'unsubscribe-users', userIds, topics: topicList })
  },
  closeAuthSession(authSessionId, code, reason) {
    call({ kind: 'close-auth-session', authSessionId, code, reason })
  },
  closeUser(userId, code, reason) {
    call({ kind: 'close-user', userId, code, reason })
  },
  closeGrants(userId, which, code, reason) {
    call({ kind: 'close-grants', userId, which, code, reason })
  },
  changeAuthSession(oldAuthSessionId, next) {
    call({ kind: 'change-auth-session', oldAuthSessionId, next })
  },
}

/** This process's Gateway as the service's event bus (app.ts, once per service: nothing is wired at import). */
export function installGateway(): void {
  installBus(bus)
}

/** The domains' session start or end hooks, each on its own: one that fails is logged, the others still run. */
function runHooks(hooks: CloseHook[], view: GatewayConnection, what: string): void {
  for (const hook of hooks)
    Promise.resolve(hook(view)).catch((e) => log.error(`${what} hook failed`, { error: String(e) }))
}

/**
 * End a session for good: close its socket (if live) and forget it. `moved`: another node resumed it (it lives on
 * there, so its record for a Resume stays).
 */
function endSession(session: GatewaySession, code?: number, reason?: string, moved = false): void {
  removeSession(session)
  if (!moved) gw().logPort?.sessions.drop(session.id)
  const ws = session.ws
  detach(session)
  if (ws && code !== undefined) close(ws, code, reason ?? '')
  const view = connectionView(session)
  runHooks(wiring().sessionEndHooks, moved ? { ...view, moved } : view, 'session end')
}

/**
 * Several nodes: a session of a node that died, which no node resumed within the resume window, ends here for good
 * (cluster/cleanup.ts): the domains' session end hooks run for it as they would have on its node.
 */
export function endOrphanedSession(sessionId: string, caller: Caller): void {
  gw().logPort?.sessions.drop(sessionId)
  const view: GatewayConnection = { caller, sessionId, send() {}, orphan: true }
  runHooks(wiring().sessionEndHooks, view, 'session end')
}

const CREDENTIAL_CHECK_EVERY = 5 // gw().sweeps (seconds), or at the next sweep after another process committed
const RECORD_REFRESH_EVERY = 10 // gw().sweeps (seconds); a record lives the resume window and 20 s past its last refresh

function sweepExpired(): void {
  const st = gw()
  const now = clock.now()
  const beatNow = performance.now()
  for (const s of allSessions().values()) if (!s.ws && s.resumableUntil <= now) endSession(s)
  for (const ws of st.connections) {
    const conn = connectionOf(ws)
    if (conn.closing) continue
    if (beatNow > conn.beatBy) close(ws, Close.SessionTimedOut, 'Session timed out')
    else if (!conn.session && !conn.identifying && now - conn.openedAt >= IDENTIFY_TIMEOUT_MS)
      close(ws, Close.NotAuthenticated, 'Not authenticated')
  }
  st.sweeps += 1
  // Several nodes: the records of the sessions with a socket here live on (a dead node's expire after the window).
  if (st.logPort && st.sweeps % RECORD_REFRESH_EVERY === 0) {
    const live: string[] = []
    for (const s of allSessions().values()) if (s.ws) live.push(s.id)
    st.logPort.sessions.refresh(live)
  }
  // A credential ended in this process closes its sockets at once (the bus); one ended by another process (the CLI's
  // `user lock`) is seen here within a second of its commit, and expiry within CREDENTIAL_CHECK_EVERY seconds.
  checkForeignCommits()
  const commits = foreignCommitsSeen()
  if (commits !== st.commitsChecked || st.sweeps % CREDENTIAL_CHECK_EVERY === 0) {
    st.commitsChecked = commits
    void closeEndedCredentials()
  }
}

/** The id a session's credential is checked by: its auth session (user) or its token family (OAuth2). */
function credentialOf(caller: Caller): string | undefined {
  return caller.kind === 'user' ? caller.sessionId : caller.kind === 'bearer' ? caller.familyId : undefined
}

/** Close (4004) the connections whose auth session or token family no longer authenticates. */
export async function closeEndedCredentials(): Promise<void> {
  for (const kind of ['user', 'bearer'] as const) {
    const check = wiring().credentialChecks[kind]
    if (!check) continue
    const held = [...allSessions().values()].filter((s) => s.caller.kind === kind)
    if (!held.length) continue
    try {
      const ids = held.map((s) => credentialOf(s.caller)!)
      const alive = await check([...new Set(ids)])
      if (ids.every((id) => alive.has(id))) continue
      // A transaction of this process that ended a credential and moved its sockets (AUTH_SESSION_CHANGE) may be
      // committed but not yet have given its events (PostgreSQL: between COMMIT's answer and its after-commit work).
      await settledCommits()
      // Several nodes: a credential replaced through another node (a new token) is gone from the database before its
      // AUTH_SESSION_CHANGE comes through the log; apply what was committed first (or ask again at the next check).
      const logPort = gw().logPort
      if (logPort && !(await logPort.caughtUp())) continue
      // Only sessions still held with the credential checked (one may have ended or moved to a new token meanwhile).
      held.forEach((s, i) => {
        if (!alive.has(ids[i]) && allSessions().get(s.id) === s && credentialOf(s.caller) === ids[i])
          endSession(s, 4004, 'Authentication failed')
      })
    } catch (error) {
      log.error('credential check failed', { kind, error: String(error) })
    }
  }
}

function connectionView(session: GatewaySession): GatewayConnection {
  return { caller: session.caller, sessionId: session.id, send: (type, data) => sendDirect(session, type, data) }
}

/** Close a socket; a compressed one first gets the frames already queued for it (e.g. AUTH_SESSION_CHANGE). */
function close(ws: Socket, code: number, reason: string): void {
  const conn = connectionOf(ws)
  conn.closing = true
  if (conn.zlib) conn.zlib.whenFlushed(() => ws.close(code, reason))
  else ws.close(code, reason)
}

/**
 * The next heartbeat is due within an interval and a half (the first beat is jittered over a whole interval; half an
 * interval more for latency). Real time, not clock.now() (tests move that). The sweep closes late sockets: one
 * deadline per socket rather than a timer, whose object and closure cost more than the rest of the connection.
 */
function heartbeatDeadline(): number {
  return performance.now() + config().gatewayHeartbeatMs * 1.5
}

/** Topics a caller's session follows before the domains add theirs. */
function baseTopics(caller: Caller, sessionId: string): string[] {
  const list = [ownTopic(sessionId)]
  if (caller.kind === 'bot') list.push(topics.app(caller.applicationId))
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
  const shard = identifyShard(d.shard)
  if (shard === false) return close(ws, Close.InvalidShard, 'Invalid shard')
  if (conn.session || conn.closing) return
  const session: GatewaySession = {
    id: randomBytes(16).toString('hex'),
    caller,
    topics: [],
    ws: null,
    resumableUntil: 0,
    readySeq: 0,
  }
  const ready: Record<string, unknown> = {
    v: 9,
    user: null,
    guilds: [],
    // No direct messages here; Discord sends the list to bots too (empty), and Eris reads it unconditionally.
    private_channels: [],
    session_id: session.id,
    session_type: caller.kind === 'bearer' ? 'oauth' : 'normal',
    resume_gateway_url: gatewayUrl(),
    ...(caller.kind === 'user' ? { auth_session_id_hash: caller.sessionIdHash } : {}),
    ...(caller.kind === 'bearer' ? { scopes: caller.scopes } : {}),
    ...(caller.kind !== 'user' ? { application: { id: caller.applicationId, flags: 0 } } : {}),
    ...(shard ? { shard } : {}),
  }
  const extraTopics: string[] = []
  const after: [string, unknown][] = []
  for (const hook of wiring().identifyHooks) {
    const contribution = await hook(caller)
    if (contribution.ready) Object.assign(ready, contribution.ready)
    if (contribution.topics) extraTopics.push(...contribution.topics)
    if (contribution.after) after.push(...contribution.after)
  }
  if (ws.readyState !== 1) return // closed while we were loading
  settlePending(conn)
  attach(session, ws, conn.zlib !== undefined)
  conn.session = session
  addSession(session)
  for (const topic of [...baseTopics(caller, session.id), ...extraTopics]) follow(session, topic)
  ready.v = conn.version
  // Not kept for Resume (a resume replays only what came after READY): a READY of a few KB per session would otherwise
  // sit in the replay buffer for each of thousands of sessions.
  sendDirect(session, 'READY', ready, false)
  // READY's own sequence (the next one here; with several nodes the last one applied): a Resume replays what follows.
  session.readySeq = currentSeq()
  saveSession(session)
  // With several nodes these go straight to the socket too (not through the log, whose entries could come first).
  for (const [type, data] of after) sendDirect(session, type, data, !gw().logPort)
  const view = connectionView(session)
  runHooks(wiring().sessionStartHooks, view, 'session start')
}

async function resume(ws: Socket, conn: Connection, d: any): Promise<void> {
  const session = typeof d?.session_id === 'string' ? allSessions().get(d.session_id) : undefined
  const caller = typeof d?.token === 'string' ? await resolveAuthorization(d.token, { bare: true }) : undefined
  if (!session && gw().logPort && typeof d?.session_id === 'string')
    return resumeTaken(ws, conn, d.session_id, caller, d?.seq === null ? 0 : d?.seq)
  // The session's own credential (core/caller.ts sameCredential), not merely its user: another application's token of
  // that user must not receive what the session's grant was given.
  const sameCaller = caller !== undefined && mayConnect(caller) && session && sameCredential(session.caller, caller)
  // seq is the last one the client saw: a non-negative integer no later than the last dispatch of this session.
  // Replay starts after it, and never before the session's own READY.
  const seq = d?.seq === null ? 0 : d?.seq
  const followed = new Set(session?.topics)
  const validSeq =
    Number.isSafeInteger(seq) && seq >= 0 && session !== undefined && seq <= lastSeqFor(followed, session.readySeq)
  const replay = session && sameCaller && validSeq ? replaySince(Math.max(seq, session.readySeq), followed) : null
  if (!session || !sameCaller || !replay || (!session.ws && session.resumableUntil <= clock.now())) {
    send(ws, frame(Op.InvalidSession, false))
    return
  }
  // A client may reconnect before we noticed its old socket die: the new socket takes over.
  if (session.ws && session.ws !== ws) {
    const old = session.ws
    connectionOf(old).session = undefined
    close(old, Close.SessionTimedOut, 'Session resumed elsewhere')
  }
  settlePending(conn)
  attach(session, ws, conn.zlib !== undefined)
  conn.session = session
  saveSession(session)
  for (const entry of replay) send(ws, entry.payload)
  sendDirect(session, 'RESUMED', { _trace: ['lobby-server'] })
}

/**
 * Several nodes: a Resume of a session this node does not hold (its socket was on another node, which may be gone).
 * Its record from the registry, the log's entries after `seq` up to what this node applied (read again until nothing
 * more was applied meanwhile), then in one synchronous step the replay and the take-over: what the log delivers next
 * reaches the socket here, none twice.
 */
async function resumeTaken(
  ws: Socket,
  conn: Connection,
  id: string,
  caller: Caller | undefined,
  seq: unknown,
): Promise<void> {
  const st = gw()
  const invalid = () => send(ws, frame(Op.InvalidSession, false))
  const registry = st.logPort!.sessions
  if (!caller || !mayConnect(caller) || !Number.isSafeInteger(seq) || (seq as number) < 0) return invalid()
  const record = await registry.claim(id)
  if (!record) return invalid()
  try {
    await takeOver(ws, conn, record, caller, seq as number)
  } finally {
    await registry.claimed(id)
  }
}

/** The rest of a take, the session claimed: its replay, then the socket here follows it. */
async function takeOver(
  ws: Socket,
  conn: Connection,
  record: SessionRecord,
  caller: Caller,
  seq: number,
): Promise<void> {
  const invalid = () => send(ws, frame(Op.InvalidSession, false))
  const registry = gw().logPort!.sessions
  const id = record.id
  // A first look: the credential itself is compared once the log has said what became of it (a user's auth session
  // may have been replaced meanwhile, and the client resume with the new one's token).
  if (record.caller.kind !== caller.kind || record.caller.userId !== caller.userId) return invalid()
  // This node may not have applied yet all that the client saw on its old node: wait a little for it.
  for (let waited = 0; seq > currentSeq() && waited < 1000; waited += 10) await Bun.sleep(10)
  if (seq > currentSeq()) return invalid()
  let after = Math.max(seq, record.readySeq)
  const entries: { seq: number; entry: LoggedEntry }[] = []
  for (let upto = currentSeq(); after < upto || upto < currentSeq(); upto = currentSeq()) {
    const more = await registry.range(after, upto)
    if (!more) return invalid() // the log no longer reaches back to it
    entries.push(...more)
    after = upto
  }
  if (ws.readyState !== 1 || conn.closing || conn.session || allSessions().has(id)) return invalid()
  const replay = replayOf(record, entries)
  if (!replay) return invalid() // ended meanwhile (a logout, a revocation)
  if (!sameCredential(replay.caller, caller)) return invalid()
  const session: GatewaySession = {
    id,
    caller: replay.caller,
    topics: [],
    ws: null,
    resumableUntil: 0,
    readySeq: record.readySeq,
  }
  settlePending(conn)
  addSession(session)
  attach(session, ws, conn.zlib !== undefined)
  conn.session = session
  for (const topic of replay.topics) follow(session, topic)
  gw().logPort!.call({ kind: 'take-session', sessionId: id, node: registry.node })
  saveSession(session)
  for (const payload of replay.frames) send(ws, payload)
  sendDirect(session, 'RESUMED', { _trace: ['lobby-server'] })
  const view = connectionView(session)
  runHooks(wiring().sessionStartHooks, view, 'session start')
}

/**
 * What a taken session missed, from the log's entries in order: its dispatches, with its topics and credentials as
 * the calls among them change them (as its node applied them); undefined when one of the calls ended it.
 */
function replayOf(
  record: SessionRecord,
  entries: { seq: number; entry: LoggedEntry }[],
): { caller: Caller; topics: Set<string>; frames: string[] } | undefined {
  let caller = record.caller
  const followed = new Set(record.topics)
  const frames: string[] = []
  for (const { seq, entry } of entries) {
    switch (entry.kind) {
      case 'dispatch':
        if (entry.topics.some((t) => followed.has(t))) frames.push(entry.frame)
        break
      case 'user-dispatch':
        if (entry.userId === caller.userId && sees(caller, entry.audience)) frames.push(entry.frame)
        break
      case 'subscribe-user':
        if (entry.userId === caller.userId && sees(caller, entry.audience)) followed.add(entry.topic)
        break
      case 'unsubscribe-user':
        if (entry.userId === caller.userId) followed.delete(entry.topic)
        break
      case 'subscribe-users':
        if (entry.userIds.includes(caller.userId) && sees(caller, entry.audience))
          for (const topic of entry.topics) followed.add(topic)
        break
      case 'unsubscribe-users':
        if (entry.userIds.includes(caller.userId)) for (const topic of entry.topics) followed.delete(topic)
        break
      case 'close-auth-session':
        if (caller.kind === 'user' && caller.sessionId === entry.authSessionId) return undefined
        break
      case 'close-user':
        if (entry.userId === caller.userId) return undefined
        break
      case 'close-grants':
        if (entry.userId === caller.userId && grantEnds(caller, entry.which)) return undefined
        break
      case 'change-auth-session':
        if (caller.kind === 'user' && caller.sessionId === entry.oldAuthSessionId) {
          followed.delete(topics.session(entry.oldAuthSessionId))
          caller = entry.next
          followed.add(topics.session(entry.next.sessionId))
          const change = { auth_session_id_hash: entry.next.sessionIdHash }
          frames.push(frame(Op.Dispatch, change, seq, 'AUTH_SESSION_CHANGE'))
        }
        break
    }
  }
  return { caller, topics: followed, frames }
}

async function onMessage(ws: Socket, conn: Connection, message: unknown): Promise<void> {
  if (conn.closing) return
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
  if (op === Op.Heartbeat || op === QOS_HEARTBEAT) return beat(ws, conn)
  if (op === Op.Identify || op === Op.Resume) {
    if (conn.session || conn.identifying) return close(ws, Close.AlreadyAuthenticated, 'Already authenticated')
    conn.identifying = true
    try {
      return await (op === Op.Identify ? identify(ws, conn, d) : resume(ws, conn, d))
    } finally {
      conn.identifying = false
    }
  }
  const handler = wiring().opHandlers.get(op)
  if (!handler && !ACCEPTED_NOOP_OPS.has(op)) return close(ws, Close.UnknownOpcode, 'Unknown opcode')
  if (!conn.session) return close(ws, Close.NotAuthenticated, 'Not authenticated')
  if (handler) await handler(connectionView(conn.session), d)
}

function onClose(ws: Socket, conn: Connection, code: number): void {
  if (!gw().connections.delete(ws)) return
  conn.closing = true
  settlePending(conn)
  conn.zlib?.end()
  const session = conn.session
  if (!session || session.ws !== ws) return
  detach(session)
  // 1000/1001 from the client end the session; anything else leaves it resumable for a while.
  if ((code === 1000 || code === 1001) && !conn.leaving) endSession(session)
  else session.resumableUntil = clock.now() + config().gatewayResumeWindowMs
}

/** Ask a user's live sockets to reconnect and resume (op 7), e.g. before moving them; sessions stay resumable. */
export function requestReconnect(userId: string): void {
  for (const s of sessionsOfUser(userId)) if (s.ws) send(s.ws, frame(Op.Reconnect, null))
}

/**
 * On shutdown: every socket first gets op 7 Reconnect (Discord's "reconnect and resume", which libraries act on at
 * once), then the close 1001. A client resumes where a node still knows its session, else it identifies again.
 */
export async function closeAllGatewaySockets(): Promise<void> {
  const st = gw()
  await drainGatewaySockets()
  clearInterval(st.sweeper)
  st.sweeper = undefined
}

/**
 * Several nodes: how long a node going away lets the sockets it sent op 7 close themselves (libraries close at once,
 * then resume) before it closes them. Closed by us first, a library may take it for a second disconnect: Discordeno
 * (its shard's handleClose) starts a second Resume beside the one op 7 started, and after the two, identifies anew
 * (a new session: what it missed is lost).
 */
const LEAVING_GRACE_MS = 2000

/**
 * Op 7 (Reconnect) to every identified socket, then close every socket. One server: 1001 at once, its sessions end
 * with it. Several nodes: 4000, once the client had LEAVING_GRACE_MS to close it itself; libraries answer either with
 * a Resume (a 1000 or 1001 makes them identify anew), and the sessions stay resumable on any node (their records
 * kept): an upgrade drops no session. Resolves once every socket is closed or being closed.
 */
export async function drainGatewaySockets(): Promise<void> {
  const st = gw()
  const reconnect = frame(Op.Reconnect, null)
  const leaving = st.logPort !== undefined
  const told: Socket[] = []
  for (const ws of [...st.connections]) {
    const conn = connectionOf(ws)
    const identified = conn.session !== undefined && !conn.closing
    if (identified) send(ws, reconnect)
    conn.leaving = leaving
    if (!leaving) close(ws, 1001, 'Server shutting down')
    else if (identified) told.push(ws)
    else close(ws, Close.UnknownError, 'Server going away: resume')
  }
  const open = () => told.filter((ws) => st.connections.has(ws) && !connectionOf(ws).closing)
  for (const by = performance.now() + LEAVING_GRACE_MS; open().length > 0 && performance.now() < by; )
    await Bun.sleep(5)
  for (const ws of open()) close(ws, Close.UnknownError, 'Server going away: resume')
}

function onOpen(raw: Socket, conn: Connection): void {
  const st = gw()
  // Discord's transport compression; other values (zstd-stream) are not offered: those clients get plain text frames.
  if (conn.compress) conn.zlib = new ZlibStream((bytes) => raw.send(bytes))
  st.connections.add(raw)
  const ip = conn.pendingIp!
  const pending = st.pendingByIp.get(ip) ?? 0
  if (pending >= MAX_PENDING_PER_IP) {
    conn.pendingIp = undefined // not counted
    return close(raw, Close.RateLimited, 'Too many unidentified connections')
  }
  st.pendingByIp.set(ip, pending + 1)
  if (conn.version !== 9 && conn.version !== 10) return close(raw, Close.InvalidApiVersion, 'Invalid API version')
  if (conn.badEncoding) return close(raw, Close.DecodeError, 'Only JSON encoding is supported')
  send(raw, frame(Op.Hello, { heartbeat_interval: config().gatewayHeartbeatMs, _trace: ['lobby-server'] }))
}

/** A text frame is JSON; anything that is not (or a binary frame) is answered by onMessage's decode error. */
function decodeFrame(message: string | Buffer): unknown {
  if (typeof message !== 'string') return message
  try {
    return JSON.parse(message)
  } catch {
    return message
  }
}

/**
 * A socket's messages are handled one after another, in the order they came: a handler may await the stores, and
 * the next message waits for it. Frames are counted as they come (the rate limit bounds what can wait).
 */
function onRawMessage(raw: Socket, conn: Connection, message: string | Buffer): void {
  if (conn.closing) return
  const now = clock.now()
  if (now - conn.windowStart >= FRAME_WINDOW_MS) {
    conn.windowStart = now
    conn.frames = 0
  }
  conn.frames += 1
  if (conn.frames > framesPerWindow(config().gatewayHeartbeatMs))
    return close(raw, Close.RateLimited, 'You are being rate limited.')
  const decoded = decodeFrame(message)
  // A heartbeat is answered as it comes, not behind the messages before it: it says the socket is alive, and a handler
  // that takes seconds (a call's first join on a busy machine) must not make a live client look dead (4009) or miss
  // its ack (a client then drops the connection and, with it, e.g. its lobby call).
  if (typeof message === 'string' && message.length <= MAX_INBOUND_BYTES && isHeartbeat(decoded)) return beat(raw, conn)
  if (conn.backlog) {
    conn.backlog.push(decoded)
    return
  }
  conn.backlog = []
  void handleInOrder(raw, conn, decoded)
}

function isHeartbeat(frame: unknown): boolean {
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return false
  const { op } = frame as { op?: unknown }
  return op === Op.Heartbeat || op === QOS_HEARTBEAT
}

function beat(ws: Socket, conn: Connection): void {
  conn.beatBy = heartbeatDeadline()
  send(ws, frame(Op.HeartbeatAck, null))
}

async function handleInOrder(raw: Socket, conn: Connection, first: unknown): Promise<void> {
  // A decoded frame is never undefined (JSON has no such value): undefined is the end of the backlog.
  for (let message: unknown = first; message !== undefined; message = conn.backlog?.shift()) {
    try {
      await onMessage(raw, conn, message)
    } catch (error) {
      log.error('gateway message failed', { error: String(error) })
      close(raw, Close.UnknownError, 'Unknown error')
    }
  }
  conn.backlog = undefined
}

/**
 * GET /gateway, answered by Bun's router (app.ts): the upgrade, logged as a request. Elysia's WebSocket route kept its
 * whole request context and a set of closures with every socket (~13 KB each, measured); a Gateway socket keeps only
 * the few values it needs. Elysia's app-wide WebSocket handler calls the data's open, message and close.
 */
export function gatewayUpgrade(request: Request, bunServer: Server<unknown>): Response | undefined {
  const trace = beginTrace(request, bunServer)
  const query = new URL(request.url).searchParams
  const encoding = query.get('encoding')
  const data = new Connection(
    Number(query.get('v') ?? 9),
    ipKey(clientIp(request, bunServer)),
    query.get('compress') === 'zlib-stream',
    !!encoding && encoding !== 'json',
  )
  if (bunServer.upgrade(request, { data, headers: { 'x-request-id': trace.id } })) {
    finish('GET', '/gateway', 101, trace)
    return undefined
  }
  finish('GET', '/gateway', 400, trace)
  return errorResponse(Errors.notUpgraded(), { 'x-request-id': trace.id })
}

/**
 * GET /gateway/: the same upgrade. Discord's Gateway answers at `/?v=10`, and Oceanic and Eris append `/` to the URL of
 * GET /gateway/bot (`/gateway/?v=10`). Bun's router is given `/gateway/*` (Elysia's listen drops a trailing slash from
 * a route's path, which would make it `/gateway`): only `/gateway/` itself upgrades, any longer path (`/gateway//`,
 * `/gateway/x`) goes on to `otherwise` (the app, which answers its 404).
 */
export function gatewaySlashUpgrade(
  otherwise: (request: Request) => Response | Promise<Response>,
): (request: Request, bunServer: Server<unknown>) => Response | Promise<Response> | undefined {
  return (request, bunServer) =>
    new URL(request.url).pathname === '/gateway/' ? gatewayUpgrade(request, bunServer) : otherwise(request)
}

/** Open sockets and live sessions (the /metrics gauges). */
export function gatewayStats() {
  const replay = replayStats()
  return {
    connections: gw().connections.size,
    sessions: allSessions().size,
    seq: currentSeq(),
    replayEntries: replay.entries,
    replayBytes: replay.bytes,
  }
}
