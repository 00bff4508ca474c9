// The Gateway's Identify and Resume: a socket becomes a session (READY), or takes back its session and what it missed
// (with several nodes, one whose socket was on another node: resumeTaken).
import { randomBytes } from 'node:crypto'
import { type Caller, resolveAuthorization, sameCredential } from '../core/caller'
import { clock } from '../core/clock'
import { type LoggedEntry, type SessionRecord, sees, topics, wiring } from './bus'
import { type Connection, close, connectionOf, gatewayUrl, send } from './connection'
import { connectionView, gatewayLog, grantEnds, runHooks, saveSession, sendDirect } from './dispatch'
import { settlePending } from './limits'
import { Close, frame, identifyShard, Op } from './protocol'
import { currentSeq, lastSeqFor, replaySince } from './replay'
import { addSession, allSessions, attach, follow, type GatewaySession, ownTopic, type Socket } from './sessions'

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

export async function identify(ws: Socket, conn: Connection, d: any): Promise<void> {
  if (typeof d?.token !== 'string') return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  const resolved = await resolveAuthorization(d.token, { bare: true })
  if (!resolved || !mayConnect(resolved)) return close(ws, Close.AuthenticationFailed, 'Authentication failed')
  // A bot's intents decide whether its session gets DM events (bus.ts sees); a copy: the resolved caller is cached.
  const caller =
    resolved.kind === 'bot' && Number.isSafeInteger(d.intents)
      ? { ...resolved, intents: d.intents as number }
      : resolved
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
  for (const [type, data] of after) sendDirect(session, type, data, !gatewayLog())
  const view = connectionView(session)
  runHooks(wiring().sessionStartHooks, d.presence ? { ...view, presence: d.presence } : view, 'session start')
}

export async function resume(ws: Socket, conn: Connection, d: any): Promise<void> {
  const session = typeof d?.session_id === 'string' ? allSessions().get(d.session_id) : undefined
  const caller = typeof d?.token === 'string' ? await resolveAuthorization(d.token, { bare: true }) : undefined
  if (!session && gatewayLog() && typeof d?.session_id === 'string')
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
  const invalid = () => send(ws, frame(Op.InvalidSession, false))
  const registry = gatewayLog()!.sessions
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
  const registry = gatewayLog()!.sessions
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
  gatewayLog()!.call({ kind: 'take-session', sessionId: id, node: registry.node })
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
