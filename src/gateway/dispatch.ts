// The Gateway's dispatch: the EventBus the domains publish to (`bus`), each event a sequenced frame to the sockets that
// follow its topics; the bus's session calls applied to this process's sessions; with several nodes, the cluster's log
// in between (applyLogged); and a session's end. (server.ts: the sockets; identify.ts: Identify and Resume.)
// Fan-out uses Bun's native pub/sub: one publish per event, identical bytes to every subscribed socket. The Gateway
// delivers some topics itself (deliveredByTopic): every topic for sockets that asked for zlib-stream compression (they
// need bytes of their own, one zlib context each: each dispatch is deflated for each of them), and the private topics
// of one user (a native topic each cost ~1 KB per socket, measured); plain sockets pay nothing for the first.
import type { Server } from 'bun'
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { log } from '../core/log'
import { countEventPublished } from '../core/metrics'
import { type CommitHolder, holdForCommit } from '../db/client'
import {
  type Audience,
  type CloseHook,
  type EventBus,
  type GatewayConnection,
  type GatewayLogPort,
  installBus,
  isPrivateTopic,
  type LoggedEntry,
  type SessionCall,
  sees,
  topics,
  wiring,
} from './bus'
import { close, send } from './connection'
import { Close, frame, Op, Serialized } from './protocol'
import { advanceSeq, currentSeq, nextSeq, remember } from './replay'
import {
  allSessions,
  detach,
  follow,
  type GatewaySession,
  ownTopic,
  removeSession,
  sessionsOfAuthSession,
  sessionsOfUser,
  topicFollowers,
  unfollow,
} from './sessions'

/** What this module holds per service (core/app.ts). */
const newGatewayDispatch = () => ({
  server: null as Server<unknown> | null,
  /**
   * Several nodes (cluster/gateway.ts): what the bus is given goes to the cluster's log, which sequences it and hands it
   * back to every node in order (applyLogged); undefined: one server, which sequences and delivers at once.
   */
  logPort: undefined as GatewayLogPort | undefined,
})
declare module '../core/app' {
  interface AppState {
    gatewayDispatch: ReturnType<typeof newGatewayDispatch>
  }
}
const gw = appState('gatewayDispatch', newGatewayDispatch)

/** The Bun server to publish through; set once the app listens (server.ts attachGateway). */
export function publishThrough(bunServer: Server<unknown>): void {
  gw().server = bunServer
}

/** Send the bus's dispatches and calls through the cluster's log from now on (undefined: back to this process). */
export function useGatewayLog(port: GatewayLogPort | undefined): void {
  gw().logPort = port
}

/** The cluster's log the Gateway goes through (several nodes), or undefined (one server). */
export function gatewayLog(): GatewayLogPort | undefined {
  return gw().logPort
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
export function sendDirect(session: GatewaySession, type: string, data: unknown, replayable = true): void {
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
export function grantEnds(caller: Caller, which: { familyId: string } | { applicationId: string }): boolean {
  if (caller.kind !== 'bearer') return false
  return 'familyId' in which
    ? caller.familyId === which.familyId
    : which.applicationId === '*' || caller.applicationId === which.applicationId
}

/** Several nodes: keep what another node needs to resume this session (at Identify, at each change of it). */
export function saveSession(session: GatewaySession): void {
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
export function runHooks(hooks: CloseHook[], view: GatewayConnection, what: string): void {
  for (const hook of hooks)
    Promise.resolve(hook(view)).catch((e) => log.error(`${what} hook failed`, { error: String(e) }))
}

/**
 * End a session for good: close its socket (if live) and forget it. `moved`: another node resumed it (it lives on
 * there, so its record for a Resume stays).
 */
export function endSession(session: GatewaySession, code?: number, reason?: string, moved = false): void {
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

export function connectionView(session: GatewaySession): GatewayConnection {
  return { caller: session.caller, sessionId: session.id, send: (type, data) => sendDirect(session, type, data) }
}

/** Ask a user's live sockets to reconnect and resume (op 7), e.g. before moving them; sessions stay resumable. */
export function requestReconnect(userId: string): void {
  for (const s of sessionsOfUser(userId)) if (s.ws) send(s.ws, frame(Op.Reconnect, null))
}
