// The Gateway's dispatches the SDK types (the server's reference: /api/docs/gateway). Any other event name still
// arrives, typed `unknown`.
import type { LobbyMessage, User } from './api.gen'

export type Metadata = Record<string, string>

/** A lobby member as the Gateway and the lobby objects carry it. */
export type LobbyMember = {
  id: string
  metadata: Metadata | null
  flags: number
  /** Whether the member has a Gateway session (voice: in the call) right now. */
  connected?: boolean
  /** The member's public user, where the server includes it (GET /lobbies/{id} as a user). */
  user?: User
}

export type LobbyVoiceState = {
  lobby_id: string
  channel_id: null
  user_id: string
  session_id: string | null
  deaf: boolean
  mute: boolean
  self_deaf: boolean
  self_mute: boolean
  self_video: boolean
  suppress: boolean
  request_to_speak_timestamp: string | null
  connected: boolean
}

/** LOBBY_CREATE / LOBBY_UPDATE: the whole lobby. */
export type GatewayLobby = {
  id: string
  application_id: string
  metadata: Metadata | null
  members: LobbyMember[]
  flags: number
  linked_channel?: unknown
  voice_states?: LobbyVoiceState[]
}

export type LobbyMemberEvent = { member: LobbyMember; lobby_id: string; application_id: string }

export type VoiceOffer = {
  lobby_id: string
  revision: number
  sdp: string
  mic_mid: string
  slots: { mid: string; user_id: string }[]
  ice_servers?: { urls: string | string[]; username?: string; credential?: string }[]
}

export type Ready = {
  v: number
  user: User & Record<string, unknown>
  session_id: string
  session_type: 'normal' | 'oauth'
  resume_gateway_url: string
  scopes?: string[]
  application?: { id: string; flags: number }
  [key: string]: unknown
}

/** Dispatch name → payload. */
export interface Dispatches {
  READY: Ready
  RESUMED: Record<string, unknown>
  LOBBY_CREATE: GatewayLobby
  LOBBY_UPDATE: GatewayLobby
  LOBBY_DELETE: { id: string; reason: 'deleted' | 'removed' | string }
  LOBBY_MEMBER_ADD: LobbyMemberEvent
  LOBBY_MEMBER_UPDATE: LobbyMemberEvent
  LOBBY_MEMBER_REMOVE: LobbyMemberEvent
  LOBBY_MEMBER_CONNECT: LobbyMemberEvent
  LOBBY_MEMBER_DISCONNECT: LobbyMemberEvent
  LOBBY_MESSAGE_CREATE: LobbyMessage
  LOBBY_MESSAGE_UPDATE: LobbyMessage
  LOBBY_VOICE_STATE_UPDATE: LobbyVoiceState
  LOBBY_VOICE_SERVER_OFFER: VoiceOffer
  LOBBY_VOICE_SERVER_CLOSE: { lobby_id: string; reason: string; message?: string }
  USER_UPDATE: User & Record<string, unknown>
  AUTH_SESSION_CHANGE: { auth_session_id_hash: string }
}
