// Lobby voice presence, as the voice domain (src/voice/) reports it: who is in a lobby's call (`connected`, set once
// the member's peer connection is up), their self_mute/self_deaf, and the events that say so
// (LOBBY_MEMBER_CONNECT/DISCONNECT, LOBBY_VOICE_STATE_UPDATE). Connected members hold off the idle close.
import type { Caller } from '../core/caller'
import { transaction } from '../db/client'
import { audiences, sees } from '../gateway/bus'
import { Effects } from './effects'
import { armIdleDeadline } from './activity'
import { eventMember, lobbyVoiceState } from './serialize'
import { cachedLobby, updateLobby } from './store'
import { getMember, cachedLobbyMembers, setVoice } from './members-store'

export { onMemberLeave, type LeaveReason } from './leave-hooks'

export type VoiceFlags = { selfMute: boolean; selfDeaf: boolean }

/**
 * May this caller join the lobby's call? A user or OAuth2 session of a member (an OAuth2 session only in its own
 * application's lobbies); bots never. Unknown lobby and not a member look the same.
 */
export async function callAccess(
  caller: Caller,
  lobbyId: string,
): Promise<{ lobbyId: string; idleTimeoutMs: number } | undefined> {
  const lobby = await cachedLobby(lobbyId)
  // Who may join is who sees the lobby (gateway/bus.ts sees): no bot; an OAuth2 session of its application, with
  // lobbies.write.
  if (!lobby || !sees(caller, audiences.lobby(lobby.applicationId))) return undefined
  if (!(await getMember(lobby.id, caller.userId))) return undefined
  return { lobbyId: lobby.id, idleTimeoutMs: lobby.idleTimeoutSeconds * 1000 }
}

/** The lobby's idle timeout (a call with no media this long ends); undefined once the lobby is gone. */
export async function callIdleTimeoutMs(lobbyId: string): Promise<number | undefined> {
  const lobby = await cachedLobby(lobbyId)
  return lobby ? lobby.idleTimeoutSeconds * 1000 : undefined
}

/** The user ids that are (still) members of the lobby. */
export async function memberIds(lobbyId: string): Promise<Set<string>> {
  return new Set((await cachedLobbyMembers(lobbyId)).map((m) => m.userId))
}

/** The member's peer connection is up: connected, the idle countdown stops. False when not (or no longer) a member. */
export async function markConnected(
  lobbyId: string,
  userId: string,
  sessionId: string,
  flags: VoiceFlags,
): Promise<boolean> {
  return await transaction(async (tx) => {
    const effects = new Effects()
    const lobby = await cachedLobby(lobbyId)
    const before = lobby && (await getMember(lobbyId, userId))
    if (!lobby || !before) return false
    const after = (await setVoice(tx, lobbyId, userId, { voiceSessionId: sessionId, ...flags }))!
    if (lobby.idleDeadline !== null) await updateLobby(tx, lobbyId, { idleDeadline: null })
    const base = { member: eventMember(after), lobby_id: lobby.id, application_id: lobby.applicationId }
    if (before.voiceSessionId === null) effects.toLobby(lobby, 'LOBBY_MEMBER_CONNECT', base)
    effects.toLobby(lobby, 'LOBBY_VOICE_STATE_UPDATE', lobbyVoiceState(after))
    await effects.flush()
    return true
  })
}

/** self_mute / self_deaf changed for a connected member of this session. */
export async function markVoiceFlags(
  lobbyId: string,
  userId: string,
  sessionId: string,
  flags: VoiceFlags,
): Promise<void> {
  await transaction(async (tx) => {
    const effects = new Effects()
    const lobby = await cachedLobby(lobbyId)
    const before = lobby && (await getMember(lobbyId, userId))
    if (!lobby || !before || before.voiceSessionId !== sessionId) return
    if (before.selfMute === flags.selfMute && before.selfDeaf === flags.selfDeaf) return
    effects.toLobby(
      lobby,
      'LOBBY_VOICE_STATE_UPDATE',
      lobbyVoiceState((await setVoice(tx, lobbyId, userId, { voiceSessionId: sessionId, ...flags }))!),
    )
    await effects.flush()
  })
}

/** The lobby's call ended with no one to say so (several nodes: its node died): each member in it is disconnected. */
export async function disconnectCall(lobbyId: string): Promise<void> {
  for (const m of await cachedLobbyMembers(lobbyId))
    if (m.voiceSessionId !== null) await markDisconnected(lobbyId, m.userId, m.voiceSessionId)
}

/**
 * The member's call from this session ended: disconnected (if still a member), the idle countdown may start, and the
 * lobby hears a voice state with `connected: false` (also when the member was just removed).
 */
export async function markDisconnected(lobbyId: string, userId: string, sessionId: string): Promise<void> {
  await transaction(async (tx) => {
    const effects = new Effects()
    const lobby = await cachedLobby(lobbyId)
    if (!lobby) return
    const before = await getMember(lobbyId, userId)
    if (before && before.voiceSessionId !== sessionId) return
    if (before) {
      const after = (await setVoice(tx, lobbyId, userId, { voiceSessionId: null, selfMute: false, selfDeaf: false }))!
      effects.toLobby(lobby, 'LOBBY_MEMBER_DISCONNECT', {
        member: eventMember(after),
        lobby_id: lobby.id,
        application_id: lobby.applicationId,
      })
      await armIdleDeadline(lobbyId)
    }
    effects.toLobby(
      lobby,
      'LOBBY_VOICE_STATE_UPDATE',
      lobbyVoiceState({ lobbyId, userId, voiceSessionId: null, selfMute: false, selfDeaf: false }, sessionId),
    )
    await effects.flush()
  })
}
