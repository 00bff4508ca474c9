// Lobby, member and message objects: the REST shapes (WIRE.md §1) and the Gateway shapes (members carry
// `connected`; Gateway lobby objects carry `voice_states`). Spec §2.2 says Gateway member objects omit `id`, but
// Discord's clients key members by id, so they carry it too (issue 17).
import type { UserRow } from '../accounts/tables'
import { publicUser } from '../accounts/serialize'
import type { LobbyMemberRow, LobbyMessageRow, LobbyRow } from './tables'

export function restMember(m: LobbyMemberRow) {
  return { id: m.userId, metadata: m.metadata ?? null, flags: m.flags }
}

/** A member in member events (LOBBY_MEMBER_*): with id, so clients know who. */
export function eventMember(m: LobbyMemberRow) {
  return { id: m.userId, metadata: m.metadata ?? null, flags: m.flags, connected: m.voiceSessionId !== null }
}

/** A member inside a Gateway lobby object: the same shape as in member events. */
const gatewayMember = eventMember

/**
 * A lobby voice state (Discord's voice state object with lobby_id; channel_id null), plus `connected`: false when
 * the member has just left the call (session_id then names the session that was in it).
 */
export function lobbyVoiceState(
  m: Pick<LobbyMemberRow, 'lobbyId' | 'userId' | 'voiceSessionId' | 'selfMute' | 'selfDeaf'>,
  leftSessionId?: string,
) {
  return {
    lobby_id: m.lobbyId,
    channel_id: null,
    user_id: m.userId,
    session_id: m.voiceSessionId ?? leftSessionId ?? null,
    deaf: false,
    mute: false,
    self_deaf: m.selfDeaf,
    self_mute: m.selfMute,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
    connected: m.voiceSessionId !== null,
  }
}

/**
 * The REST lobby object. `forApp`: the caller is the application's Bot, the only one shown the lobby's
 * `override_event_webhooks_url` (where its events go is the application's business, not its players'); omitted when
 * unset, like `linked_channel`.
 */
export function restLobby(l: LobbyRow, members: LobbyMemberRow[], linkedChannel?: unknown, forApp = false) {
  return {
    id: l.id,
    application_id: l.applicationId,
    metadata: l.metadata ?? null,
    members: members.map(restMember),
    flags: l.flags,
    ...(linkedChannel ? { linked_channel: linkedChannel } : {}),
    ...(forApp && l.overrideEventWebhooksUrl ? { override_event_webhooks_url: l.overrideEventWebhooksUrl } : {}),
  }
}

/** The Gateway lobby object (never with the override URL: members' sessions get it too). */
export function gatewayLobby(l: LobbyRow, members: LobbyMemberRow[], linkedChannel?: unknown) {
  return {
    ...restLobby(l, members, linkedChannel),
    members: members.map(gatewayMember),
    voice_states: members.filter((m) => m.voiceSessionId !== null).map((m) => lobbyVoiceState(m)),
  }
}

export function lobbyMessage(m: LobbyMessageRow, author: UserRow, extra: { nonce?: string | number } = {}) {
  return {
    id: m.id,
    type: 0,
    content: m.content,
    lobby_id: m.lobbyId,
    // Discord sets channel_id to the lobby id for lobby messages.
    channel_id: m.lobbyId,
    author: publicUser(author),
    ...(m.metadata ? { metadata: m.metadata } : {}),
    ...(m.moderationMetadata ? { moderation_metadata: m.moderationMetadata } : {}),
    flags: m.flags,
    tts: m.tts,
    application_id: m.applicationId,
    timestamp: new Date(m.createdAt).toISOString(),
    ...(m.editedAt !== null ? { edited_timestamp: new Date(m.editedAt).toISOString() } : {}),
    ...(extra.nonce !== undefined ? { nonce: extra.nonce } : {}),
  }
}
