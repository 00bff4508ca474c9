// The lobby call's signalling over the Gateway: Discord's op 17 to join, leave and set self_mute/self_deaf, and
// opcodes and dispatches of our own for WebRTC (documented in README.md, "Lobby voice calls"). Our opcode numbers
// sit far above Discord's (0-43 as of 2026) so a future Discord opcode does not land on them.
import { isSnowflake } from '../core/snowflake'
import { MAX_CANDIDATE_CHARS, MAX_SDP_CHARS, MAX_STATES } from './limits'

export const VoiceOp = {
  /** Discord's Lobby Voice States: d = [{lobby_id, self_mute, self_deaf}]; lobbies not listed are left. */
  LobbyVoiceStates: 17,
  /** Ours: d = {lobby_id, sdp, revision?}, the client's SDP answer to LOBBY_VOICE_SERVER_OFFER. */
  LobbyVoiceAnswer: 100,
  /** Ours: d = {lobby_id, candidate: {candidate, sdpMid?, sdpMLineIndex?, usernameFragment?} | null}, trickle ICE. */
  LobbyVoiceCandidate: 101,
} as const

export const VoiceDispatch = {
  /** To the joining session: {lobby_id, revision, sdp, mic_mid, slots: [{mid, user_id}], ice_servers}. */
  Offer: 'LOBBY_VOICE_SERVER_OFFER',
  /** To the session: the server ended (or refused) its call in a lobby: {lobby_id, reason, message}. */
  Close: 'LOBBY_VOICE_SERVER_CLOSE',
} as const

export const closeReasons = {
  left: 'You left the call.',
  not_member: 'Only members of the lobby can join its call.',
  call_full: 'The call is full.',
  too_many_calls: 'You are in too many calls.',
  replaced: 'You joined this call from another session.',
  removed: 'You are no longer a member of the lobby.',
  lobby_deleted: 'The lobby was deleted.',
  idle: 'No media flowed in the call for the lobby idle timeout.',
  timeout: 'The peer connection was not established in time.',
  failed: 'The peer connection failed.',
  negotiation_failed: 'The SDP answer could not be applied.',
  unavailable: 'The server could not open a peer connection.',
  server_stopping: 'The node holding the call is stopping: send op 17 again to join it on another.',
} as const

export type CloseReason = keyof typeof closeReasons

export type VoiceState = { lobbyId: string; selfMute: boolean; selfDeaf: boolean }

/** Op 17's array; malformed entries are skipped, at most MAX_STATES read. Null when d is not an array. */
export function parseStates(data: unknown): VoiceState[] | null {
  if (!Array.isArray(data)) return null
  const out: VoiceState[] = []
  for (const s of data.slice(0, MAX_STATES)) {
    if (!s || typeof s !== 'object' || !isSnowflake((s as any).lobby_id)) continue
    out.push({
      lobbyId: (s as any).lobby_id,
      selfMute: (s as any).self_mute === true,
      selfDeaf: (s as any).self_deaf === true,
    })
  }
  return out
}

export type Answer = { lobbyId: string; sdp: string; revision?: number }

export function parseAnswer(data: unknown): Answer | null {
  const d = data as any
  if (!d || typeof d !== 'object' || !isSnowflake(d.lobby_id)) return null
  // Accept {sdp: "..."} and, as browsers serialize a description, {sdp: {type: "answer", sdp: "..."}}.
  const sdp =
    typeof d.sdp === 'string'
      ? d.sdp
      : d.sdp && typeof d.sdp === 'object' && d.sdp.type === 'answer'
        ? d.sdp.sdp
        : undefined
  if (typeof sdp !== 'string' || sdp.length === 0 || sdp.length > MAX_SDP_CHARS) return null
  const revision = Number.isSafeInteger(d.revision) ? (d.revision as number) : undefined
  return { lobbyId: d.lobby_id, sdp, revision }
}

export type Candidate = {
  lobbyId: string
  candidate: { candidate: string; sdpMid?: string; sdpMLineIndex?: number; usernameFragment?: string } | null
}

export function parseCandidate(data: unknown): Candidate | null {
  const d = data as any
  if (!d || typeof d !== 'object' || !isSnowflake(d.lobby_id)) return null
  const c = d.candidate
  if (c === null || c === undefined) return { lobbyId: d.lobby_id, candidate: null }
  if (typeof c !== 'object' || typeof c.candidate !== 'string' || c.candidate.length > MAX_CANDIDATE_CHARS) return null
  if (c.candidate === '') return { lobbyId: d.lobby_id, candidate: null }
  return {
    lobbyId: d.lobby_id,
    candidate: {
      candidate: c.candidate,
      ...(typeof c.sdpMid === 'string' && c.sdpMid.length <= 32 ? { sdpMid: c.sdpMid } : {}),
      ...(Number.isInteger(c.sdpMLineIndex) && c.sdpMLineIndex >= 0 && c.sdpMLineIndex < 64
        ? { sdpMLineIndex: c.sdpMLineIndex }
        : {}),
      ...(typeof c.usernameFragment === 'string' && c.usernameFragment.length <= 256
        ? { usernameFragment: c.usernameFragment }
        : {}),
    },
  }
}
