// Lobby calls: one room per lobby with a call, one participant per member in it. Joining, leaving, self_mute and
// self_deaf come from op 17; the SDP answer and ICE candidates from our ops 100 and 101. Packets of a member's
// microphone are forwarded, unchanged but for the header, to every other connected member's slot for them.
// Nothing is decoded, mixed or stored.
import { appState } from '../core/app'
import type { RtpPacket } from 'werift'
import { config } from '../config'
import { clock } from '../core/clock'
import { log } from '../core/log'
import type { GatewayConnection } from '../gateway/bus'
import { nodeRouting } from '../gateway/nodes'
import {
  callAccess,
  callIdleTimeoutMs,
  markConnected,
  markDisconnected,
  markVoiceFlags,
  memberIds,
  type LeaveReason,
} from '../lobbies/voice-presence'
import { CONNECT_TIMEOUT_MS, DISCONNECTED_GRACE_MS, MAX_CALLS_PER_USER, SWEEP_EVERY_MS } from './limits'
import type { Participant, ParticipantEvents, Send } from './participant'
import { closeReasons, VoiceDispatch, type Answer, type Candidate, type CloseReason, type VoiceState } from './protocol'

/**
 * The peer connections (participant.ts and werift, ~12 ms of module loading in the binary) load with the first call
 * rather than at start. werift's x509 dependency (tsyringe) needs Reflect metadata loaded before it.
 */
let peers: typeof import('./participant') | undefined
async function loadPeers(): Promise<typeof import('./participant')> {
  if (!peers) {
    await import('reflect-metadata')
    peers = await import('./participant')
  }
  return peers
}

class Room {
  readonly members = new Map<string, Participant>()
  /** Last RTP from anyone (clock.now()); a call quiet for the lobby's idle timeout ends. */
  lastMediaAt = clock.now()
  constructor(readonly lobbyId: string) {}
}

/** What this module holds per App (core/app.ts). */
const newVoiceCalls = () => ({
  rooms: new Map<string, Room>(),
  /** sessionId → lobbyId → participant. */
  bySession: new Map<string, Map<string, Participant>>(),
  /** userId → calls the user is in (over all sessions). */
  callsOfUser: new Map<string, number>(),
  sweeper: undefined as Timer | undefined,
  sweeping: false,
})
declare module '../core/app' {
  interface AppState {
    voiceCalls: ReturnType<typeof newVoiceCalls>
  }
}
const held = appState('voiceCalls', newVoiceCalls)

function countCall(userId: string, by: 1 | -1): void {
  const st = held()
  const n = (st.callsOfUser.get(userId) ?? 0) + by
  if (n > 0) st.callsOfUser.set(userId, n)
  else st.callsOfUser.delete(userId)
}

/**
 * Several nodes: a user's calls, on whichever nodes hold them, in one Redis hash (lobby → the call's node), so that
 * MAX_CALLS_PER_USER holds over the cluster; a dead node's entries stop counting. One server: `callsOfUser` alone.
 */
const userCallsKey = (userId: string) => `voice:user-calls:${userId}`
/** The hash outlives its last join by this (a node that dies leaves its entries; they stop counting at once). */
const USER_CALLS_TTL_MS = 24 * 3600_000

async function claimCall(userId: string, lobbyId: string): Promise<boolean> {
  const r = nodeRouting()
  return !r || (await r.claim(userCallsKey(userId), lobbyId, MAX_CALLS_PER_USER, USER_CALLS_TTL_MS))
}

async function unclaimCall(userId: string, lobbyId: string): Promise<void> {
  try {
    await nodeRouting()?.unclaim(userCallsKey(userId), lobbyId)
  } catch (error) {
    // Redis away: the entry counts until this node dies or the user joins that lobby's call again.
    log.warn('voice: a call of a user could not be given up', { error: String(error) })
  }
}

function refuse(send: Send, lobbyId: string, reason: CloseReason): void {
  send(VoiceDispatch.Close, { lobby_id: lobbyId, reason, message: closeReasons[reason] })
}

const events: ParticipantEvents = {
  connected: (p) => void onConnected(p).catch((e) => log.error('voice connect failed', { error: String(e) })),
  failed: (p, reason) => void leave(p, reason),
  rtp: forward,
}

function forward(from: Participant, packet: RtpPacket): void {
  const room = held().rooms.get(from.lobbyId)
  if (!room || room.members.get(from.userId) !== from) return
  room.lastMediaAt = clock.now()
  from.stats.packetsIn += 1
  if (from.selfMute || !from.connected) return
  // A participant exists, so its module is loaded.
  const clean = peers!.cleanPacket(packet)
  for (const to of room.members.values()) if (to !== from && to.connected) to.forward(from.userId, clean)
}

async function onConnected(p: Participant): Promise<void> {
  if (p.closed || p.connected) return
  p.connected = true
  if (!(await markConnected(p.lobbyId, p.userId, p.sessionId, { selfMute: p.selfMute, selfDeaf: p.selfDeaf }))) {
    p.connected = false // never announced: nothing to take back
    return leave(p, 'removed')
  }
  if (p.closed) return
  // Everyone else in the call now receives this member (a new or reused slot each; one renegotiation each).
  for (const other of held().rooms.get(p.lobbyId)?.members.values() ?? []) if (other !== p) other.attach(p.userId)
}

/** End one member's call. The session hears why unless it is gone; the lobby hears the disconnect. */
export async function leave(p: Participant, reason: CloseReason, notify = true): Promise<void> {
  const st = held()
  if (p.closed) return
  p.close()
  const room = st.rooms.get(p.lobbyId)
  if (room?.members.get(p.userId) === p) room.members.delete(p.userId)
  const mine = st.bySession.get(p.sessionId)
  if (mine?.get(p.lobbyId) === p) mine.delete(p.lobbyId)
  if (mine?.size === 0) st.bySession.delete(p.sessionId)
  countCall(p.userId, -1)
  if (room) {
    for (const other of room.members.values()) other.detach(p.userId)
    if (room.members.size === 0) st.rooms.delete(p.lobbyId)
  }
  if (st.rooms.size === 0) stopSweeper()
  if (notify) refuse(p.send, p.lobbyId, reason)
  if (nodeRouting()) await unclaimCall(p.userId, p.lobbyId)
  if (p.connected) await markDisconnected(p.lobbyId, p.userId, p.sessionId)
}

/** Join the lobby's call here, or keep it with new flags (a session of this node or, several nodes, of another). */
export async function joinOrUpdate(connection: GatewayConnection, state: VoiceState): Promise<void> {
  const caller = connection.caller
  if (caller.kind === 'bot') return
  const st = held()
  const { Participant } = await loadPeers()
  const { lobbyId } = state
  if (!(await callAccess(caller, lobbyId))) return refuse(connection.send, lobbyId, 'not_member')
  for (;;) {
    // One call per member: joining from another session ends the one there.
    for (
      let existing = st.rooms.get(lobbyId)?.members.get(caller.userId);
      existing;
      existing = st.rooms.get(lobbyId)?.members.get(caller.userId)
    ) {
      if (existing.sessionId === connection.sessionId) return setFlags(existing, state)
      await leave(existing, 'replaced')
    }
    if (!nodeRouting()) break
    // Several nodes: the user's calls on every live node count (claimCall); a member that came meanwhile: again.
    let claimed: boolean
    try {
      claimed = await claimCall(caller.userId, lobbyId)
    } catch {
      return refuse(connection.send, lobbyId, 'unavailable')
    }
    if (!claimed) return refuse(connection.send, lobbyId, 'too_many_calls')
    if (!st.rooms.get(lobbyId)?.members.has(caller.userId)) break
  }
  // From here to the insertion nothing awaits: the size checks and the new member are one step (a refusal gives the
  // claim up again).
  const refused = (reason: CloseReason) => {
    refuse(connection.send, lobbyId, reason)
    if (nodeRouting()) void unclaimCall(caller.userId, lobbyId)
  }
  if ((st.callsOfUser.get(caller.userId) ?? 0) >= MAX_CALLS_PER_USER) return refused('too_many_calls')
  const room = st.rooms.get(lobbyId) ?? new Room(lobbyId)
  if (room.members.size >= config().voiceMaxCallSize) return refused('call_full')
  let p: Participant
  try {
    p = new Participant(
      lobbyId,
      caller.userId,
      connection.sessionId,
      connection.send,
      state.selfMute,
      state.selfDeaf,
      events,
    )
  } catch (error) {
    log.error('voice peer connection failed', { error: String(error) })
    return refused('unavailable')
  }
  if (room.members.size === 0) room.lastMediaAt = clock.now()
  room.members.set(caller.userId, p)
  st.rooms.set(lobbyId, room)
  let mine = st.bySession.get(connection.sessionId)
  if (!mine) st.bySession.set(connection.sessionId, (mine = new Map()))
  mine.set(lobbyId, p)
  countCall(caller.userId, 1)
  startSweeper()
  const others = [...room.members.values()].filter((o) => o !== p && o.connected).map((o) => o.userId)
  await p.start(others)
}

async function setFlags(p: Participant, state: VoiceState): Promise<void> {
  const unmuted = p.selfMute && !state.selfMute
  const undeafened = p.selfDeaf && !state.selfDeaf
  p.selfMute = state.selfMute
  p.selfDeaf = state.selfDeaf
  if (unmuted) for (const other of held().rooms.get(p.lobbyId)?.members.values() ?? []) other.resync(p.userId)
  if (undeafened) p.resync()
  if (p.connected) await markVoiceFlags(p.lobbyId, p.userId, p.sessionId, state)
}

/** Op 17: the session's calls are exactly the lobbies listed (joined, kept with new flags, or left). */
export async function setVoiceStates(connection: GatewayConnection, states: VoiceState[]): Promise<void> {
  if (connection.caller.kind === 'bot') return
  const wanted = new Map(states.map((s) => [s.lobbyId, s]))
  for (const p of [...(held().bySession.get(connection.sessionId)?.values() ?? [])])
    if (!wanted.has(p.lobbyId)) await leave(p, 'left')
  for (const state of wanted.values()) await joinOrUpdate(connection, state)
}

/** The session leaves the lobby's call here (op 17 without it). */
export async function leaveCall(sessionId: string, lobbyId: string): Promise<void> {
  const p = held().bySession.get(sessionId)?.get(lobbyId)
  if (p) await leave(p, 'left')
}

export async function applyAnswer(sessionId: string, answer: Answer): Promise<void> {
  const p = held().bySession.get(sessionId)?.get(answer.lobbyId)
  if (!p) return
  if (!(await p.answer(answer.sdp, answer.revision))) await leave(p, 'negotiation_failed')
}

export async function addCandidate(sessionId: string, c: Candidate): Promise<void> {
  const p = held().bySession.get(sessionId)?.get(c.lobbyId)
  if (p && c.candidate) await p.addCandidate(c.candidate)
}

/** The lobbies with a call on this node. */
export function callLobbies(): string[] {
  return [...held().rooms.keys()]
}

/** The Gateway session ended for good: its calls end (nobody left to tell). */
export async function endSessionCalls(sessionId: string): Promise<void> {
  for (const p of [...(held().bySession.get(sessionId)?.values() ?? [])]) await leave(p, 'left', false)
}

/** A member left the lobby (removed, or the lobby deleted): out of the call at once. */
export async function memberLeft(lobbyId: string, userId: string, reason: LeaveReason): Promise<void> {
  const p = held().rooms.get(lobbyId)?.members.get(userId)
  if (p) await leave(p, reason === 'deleted' ? 'lobby_deleted' : 'removed')
}

/** Idle calls, peers that never connected or lost consent, members who left by a path without a hook. */
export async function sweepCalls(now = clock.now()): Promise<void> {
  for (const room of [...held().rooms.values()]) {
    const idleMs = await callIdleTimeoutMs(room.lobbyId)
    if (idleMs === undefined || now - room.lastMediaAt >= idleMs) {
      for (const p of [...room.members.values()]) await leave(p, idleMs === undefined ? 'lobby_deleted' : 'idle')
      continue
    }
    const members = await memberIds(room.lobbyId)
    for (const p of [...room.members.values()]) {
      if (!members.has(p.userId)) await leave(p, 'removed')
      else if (
        (!p.connected && now - p.createdAt >= CONNECT_TIMEOUT_MS) ||
        (p.awaitingAnswer && now - p.offerSentAt >= CONNECT_TIMEOUT_MS)
      )
        await leave(p, 'timeout')
      else if (p.disconnectedAt !== null && now - p.disconnectedAt >= DISCONNECTED_GRACE_MS) await leave(p, 'failed')
    }
  }
}

function startSweeper(): void {
  const st = held()
  if (st.sweeper) return
  st.sweeper = setInterval(async () => {
    if (st.sweeping) return
    st.sweeping = true
    try {
      await sweepCalls()
    } catch (error) {
      log.error('voice sweep failed', { error: String(error) })
    } finally {
      st.sweeping = false
    }
  }, SWEEP_EVERY_MS)
  st.sweeper.unref?.()
}

function stopSweeper(): void {
  const st = held()
  clearInterval(st.sweeper)
  st.sweeper = undefined
}

/**
 * Shutdown: every call ends (peer connections closed, members disconnected). One server: its sockets are closing, no one
 * to tell. Several nodes: the members' sessions live on (on other nodes, or resumed there), so each is told, through
 * the log, and joins again on a node that stays.
 */
export async function stopAllCalls(): Promise<void> {
  const tell = nodeRouting() !== undefined
  for (const room of [...held().rooms.values()])
    for (const p of [...room.members.values()]) await leave(p, tell ? 'server_stopping' : 'left', tell)
  stopSweeper()
}

/** Counters for tests and the bench: per call member, packets in, forwarded out, dropped. */
export function voiceStats() {
  return [...held().rooms.values()].flatMap((room) =>
    [...room.members.values()].map((p) => ({
      lobby_id: room.lobbyId,
      user_id: p.userId,
      session_id: p.sessionId,
      connected: p.connected,
      packets_in: p.stats.packetsIn,
      forwarded: p.stats.forwarded,
      dropped_unverified: p.stats.droppedUnverified,
      dropped_rate: p.stats.droppedRate,
    })),
  )
}
