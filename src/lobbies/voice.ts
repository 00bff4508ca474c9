// Lobby voice presence from the Gateway: op 17 (lobby voice states) connects a member to the listed lobbies and
// disconnects it from the others; a session's end disconnects it. Connected members hold off the idle close.
import type { GatewayConnection } from '../gateway/bus'
import { isSnowflake } from '../core/snowflake'
import { transaction, type DB } from '../db/client'
import { Effects } from './effects'
import { armIdleDeadline } from './membership'
import { eventMember } from './serialize'
import { getLobby, getMember, membersConnectedBy, setVoice, updateLobby } from './store'
import type { LobbyMemberRow } from './tables'

type VoiceState = { lobby_id: string; self_mute: boolean; self_deaf: boolean }

/** Lobbies one op 17 may name; more is not a client, it is abuse. */
const MAX_STATES = 25

function parseStates(data: unknown): VoiceState[] {
  if (!Array.isArray(data)) return []
  const out: VoiceState[] = []
  for (const s of data.slice(0, MAX_STATES)) {
    if (!s || typeof s !== 'object' || !isSnowflake((s as any).lobby_id)) continue
    out.push({ lobby_id: (s as any).lobby_id, self_mute: (s as any).self_mute === true, self_deaf: (s as any).self_deaf === true })
  }
  return out
}

function connectEvent(effects: Effects, tx: DB, m: LobbyMemberRow, type: 'LOBBY_MEMBER_CONNECT' | 'LOBBY_MEMBER_DISCONNECT') {
  const lobby = getLobby(m.lobbyId, tx)
  if (lobby) effects.toLobby(lobby, type, { member: eventMember(m), lobby_id: lobby.id, application_id: lobby.applicationId })
}

export async function handleLobbyVoiceStates(connection: GatewayConnection, data: unknown): Promise<void> {
  const caller = connection.caller
  if (caller.kind === 'bot') return
  const states = parseStates(data)
  const effects = new Effects()
  transaction((tx) => {
    const wanted = new Set<string>()
    for (const state of states) {
      const lobby = getLobby(state.lobby_id, tx)
      // An OAuth2 session speaks for its own application's lobbies only.
      if (!lobby || (caller.kind === 'bearer' && lobby.applicationId !== caller.applicationId)) continue
      const before = getMember(lobby.id, caller.userId, tx)
      if (!before) continue
      wanted.add(lobby.id)
      const after = setVoice(tx, lobby.id, caller.userId, { voiceSessionId: connection.sessionId, selfMute: state.self_mute, selfDeaf: state.self_deaf })
      if (lobby.idleDeadline !== null) updateLobby(tx, lobby.id, { idleDeadline: null })
      if (after && before.voiceSessionId === null) connectEvent(effects, tx, after, 'LOBBY_MEMBER_CONNECT')
    }
    for (const m of membersConnectedBy(tx, connection.sessionId)) {
      if (!wanted.has(m.lobbyId)) disconnect(tx, m, effects)
    }
  })
  await effects.flush()
}

function disconnect(tx: DB, m: LobbyMemberRow, effects: Effects): void {
  const after = setVoice(tx, m.lobbyId, m.userId, { voiceSessionId: null, selfMute: false, selfDeaf: false })
  if (after) connectEvent(effects, tx, after, 'LOBBY_MEMBER_DISCONNECT')
  armIdleDeadline(tx, m.lobbyId)
}

/** A gateway session ended for good: its lobby voice connections end with it. */
export async function endVoiceSession(connection: GatewayConnection): Promise<void> {
  const effects = new Effects()
  transaction((tx) => {
    for (const m of membersConnectedBy(tx, connection.sessionId)) disconnect(tx, m, effects)
  })
  await effects.flush()
}
