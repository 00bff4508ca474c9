// Several nodes: a lobby's call lives on one node (its peer connections and UDP sockets are that process's), the node
// that holds the place `voice:room:<lobby>` (gateway/nodes.ts; taken by the node that places the first join, kept while
// the call lasts, taken over when its node dies). A session's voice ops arrive on the node of its socket, which may be
// another: they are sent to the call's node, which answers the session through the Gateway's log (a dispatch to the
// session's own topic reaches its socket wherever it is). Media flows between the client and the call's node (its
// candidates carry that node's address: VOICE_PUBLIC_IP per node). The lobbies a session is in a call in are kept
// where every node reads them (`voice:calls:<session>`), so an op 17 or the session's end on any node reaches them.
// On one server none of this runs: calls.ts does it all.
import { appState } from '../core/app'
import type { Caller } from '../core/caller'
import { events, type GatewayConnection } from '../gateway/bus'
import { nodeRouting, type NodeRouting } from '../gateway/nodes'
import { ownTopic } from '../gateway/sessions'
import { disconnectCall, type LeaveReason } from '../lobbies/voice-presence'
import { addCandidate, applyAnswer, callLobbies, joinOrUpdate, leaveCall, memberLeft } from './calls'
import { type Answer, type Candidate, closeReasons, VoiceDispatch, type VoiceState } from './protocol'

const roomKey = (lobbyId: string) => `voice:room:${lobbyId}`
const callsKey = (sessionId: string) => `voice:calls:${sessionId}`
/** A call's place lasts this long past its node's last renewal (a dead node's calls are placed anew after it). */
const ROOM_TTL_MS = 30_000
const KEEP_EVERY_MS = 10_000
/** A session's list of calls outlives its last change by this (a session that never ends cleanly leaves it). */
const CALLS_TTL_MS = 24 * 3600_000

/** What one node sends another about a call it holds. */
export type VoiceMessage =
  | { op: 'join'; sessionId: string; caller: Caller; state: VoiceState; hops?: number }
  | { op: 'leave'; sessionId: string; lobbyId: string }
  | { op: 'answer'; sessionId: string; answer: Answer }
  | { op: 'candidate'; sessionId: string; candidate: Candidate }
  | { op: 'end'; sessionId: string; lobbyId: string }
  | { op: 'member-left'; lobbyId: string; userId: string; reason: LeaveReason }

/** A session as the call's node sees it: frames to it go through the log to its socket, on whichever node. */
function sessionView(sessionId: string, caller: Caller): GatewayConnection {
  return { caller, sessionId, send: (type, data) => events.publish(ownTopic(sessionId), type, data) }
}

/** What this module holds per App (core/app.ts). */
const newVoicePlacement = () => ({
  /** Places this node took for its calls: renewed while the call lasts, given up after. */
  held: new Set<string>(),
  /** Joins under way on this node, by lobby: their calls count as live for keepRooms. */
  joining: new Map<string, number>(),
  keeper: undefined as Timer | undefined,
  /** Stopping: its places are given up, and no call is placed here again. */
  stopping: false,
})
declare module '../core/app' {
  interface AppState {
    voicePlacement: ReturnType<typeof newVoicePlacement>
  }
}
const placed = appState('voicePlacement', newVoicePlacement)

/** Run a message on the call's node: here at once, or sent there. */
async function toNode(r: NodeRouting, node: string, message: VoiceMessage): Promise<void> {
  if (node === r.self) await handleVoiceMessage(message)
  else await r.send(node, 'voice', message)
}

/** A message about a call this node holds (sent by another node, or this one's own). */
export async function handleVoiceMessage(m: VoiceMessage): Promise<void> {
  const r = nodeRouting()
  switch (m.op) {
    case 'join': {
      // A join sent before this node gave its places up: the session is told to ask again (placed elsewhere then).
      if (placed().stopping) return sessionView(m.sessionId, m.caller).send(VoiceDispatch.Close, stoppingClose(m))
      // The call may have moved since the sender placed it (ended here, placed elsewhere): follow it once or twice.
      const node = r ? await r.place(roomKey(m.state.lobbyId), ROOM_TTL_MS) : undefined
      if (r && node !== r.self && (m.hops ?? 0) < 2) return r.send(node!, 'voice', { ...m, hops: (m.hops ?? 0) + 1 })
      if (!r) return joinOrUpdate(sessionView(m.sessionId, m.caller), m.state)
      // Held from now on; while the join is under way the call is not in callLobbies() yet, and keepRooms must not
      // give its place up (it did, under load: a second node could then have placed a second call).
      const st = placed()
      st.held.add(m.state.lobbyId)
      st.joining.set(m.state.lobbyId, (st.joining.get(m.state.lobbyId) ?? 0) + 1)
      try {
        return await joinOrUpdate(sessionView(m.sessionId, m.caller), m.state)
      } finally {
        const left = (st.joining.get(m.state.lobbyId) ?? 1) - 1
        if (left > 0) st.joining.set(m.state.lobbyId, left)
        else st.joining.delete(m.state.lobbyId)
      }
    }
    case 'leave':
    case 'end':
      return leaveCall(m.sessionId, m.lobbyId)
    case 'answer':
      return applyAnswer(m.sessionId, m.answer)
    case 'candidate':
      return addCandidate(m.sessionId, m.candidate)
    case 'member-left':
      return memberLeft(m.lobbyId, m.userId, m.reason)
  }
}

/** Op 17 on this node: the session's calls, on whichever nodes hold them, become exactly the lobbies listed. */
export async function routeStates(r: NodeRouting, connection: GatewayConnection, states: VoiceState[]): Promise<void> {
  const { sessionId, caller } = connection
  if (caller.kind === 'bot') return
  const key = callsKey(sessionId)
  const wanted = new Map(states.map((s) => [s.lobbyId, s]))
  for (const lobbyId of Object.keys(await r.fields(key))) {
    if (wanted.has(lobbyId)) continue
    await r.setField(key, lobbyId, null, CALLS_TTL_MS)
    const node = await r.holder(roomKey(lobbyId))
    if (node) await toNode(r, node, { op: 'leave', sessionId, lobbyId })
  }
  for (const state of wanted.values()) {
    const node = await r.place(roomKey(state.lobbyId), ROOM_TTL_MS)
    await r.setField(key, state.lobbyId, '1', CALLS_TTL_MS)
    await toNode(r, node, { op: 'join', sessionId, caller, state })
  }
}

/** Op 100 or 101 on this node: to the node of the lobby's call (none: no call to answer). */
export async function routeSignal(
  r: NodeRouting,
  sessionId: string,
  signal: { answer: Answer } | { candidate: Candidate },
): Promise<void> {
  const lobbyId = 'answer' in signal ? signal.answer.lobbyId : signal.candidate.lobbyId
  const node = await r.holder(roomKey(lobbyId))
  if (!node) return
  await toNode(
    r,
    node,
    'answer' in signal ? { op: 'answer', sessionId, ...signal } : { op: 'candidate', sessionId, ...signal },
  )
}

/**
 * The session ended for good on this node: its calls end wherever they are. Not when it was resumed on another node
 * (`moved`): its calls go on, and their frames follow it there through the log.
 */
export async function routeSessionEnd(r: NodeRouting, sessionId: string): Promise<void> {
  const key = callsKey(sessionId)
  for (const lobbyId of Object.keys(await r.fields(key))) {
    const node = await r.holder(roomKey(lobbyId))
    if (node) await toNode(r, node, { op: 'end', sessionId, lobbyId })
  }
  await r.dropFields(key)
}

/** The call's node died (its peer connections with it): every member still shown in the call is disconnected. */
export async function callOrphaned(key: string): Promise<void> {
  await disconnectCall(key.slice(roomKey('').length))
}

/** A member left a lobby through this node: out of the call on its node. */
export async function routeMemberLeft(lobbyId: string, userId: string, reason: LeaveReason): Promise<void> {
  const r = nodeRouting()
  const node = r ? await r.holder(roomKey(lobbyId)) : undefined
  if (!r || !node) return memberLeft(lobbyId, userId, reason)
  await toNode(r, node, { op: 'member-left', lobbyId, userId, reason })
}

/** Several nodes: renew the places of this node's calls while they last, give up those whose call ended. */
export function startKeepingRooms(): void {
  const st = placed()
  if (!nodeRouting() || st.keeper) return
  st.keeper = setInterval(() => void keepRooms(), KEEP_EVERY_MS)
  st.keeper.unref?.()
}

async function keepRooms(): Promise<void> {
  const st = placed()
  const r = nodeRouting()
  if (!r) return
  const live = new Set([...callLobbies(), ...st.joining.keys()])
  for (const lobbyId of [...st.held]) {
    try {
      if (live.has(lobbyId) && (await r.keep(roomKey(lobbyId), ROOM_TTL_MS))) continue
      st.held.delete(lobbyId)
      if (!live.has(lobbyId)) await r.release(roomKey(lobbyId))
    } catch {} // Redis away: tried again at the next round, the place lasts ROOM_TTL_MS
  }
}

const stoppingClose = (m: { state: VoiceState }) => ({
  lobby_id: m.state.lobbyId,
  reason: 'server_stopping',
  message: closeReasons.server_stopping,
})

/**
 * At stop, before the calls end: give every place up, so that the members told to join again (calls.ts stopAllCalls)
 * place the call on a node that stays.
 */
export async function stopKeepingRooms(): Promise<void> {
  const st = placed()
  st.stopping = true
  clearInterval(st.keeper)
  st.keeper = undefined
  const r = nodeRouting()
  for (const lobbyId of st.held) await r?.release(roomKey(lobbyId)).catch(() => {})
  st.held.clear()
}
