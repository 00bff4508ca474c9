// Lobby voice presence through the handlers the Gateway calls (op 17 and session end), without a socket.
import { afterEach, describe, expect, test } from 'bun:test'
import type { Caller } from '../../src/core/caller'
import { clock } from '../../src/core/clock'
import { rawDatabase } from '../../src/db/client'
import type { GatewayConnection } from '../../src/gateway/bus'
import { sweepIdleLobbies } from '../../src/lobbies/idle'
import { endVoiceSession, handleLobbyVoiceStates } from '../../src/lobbies/voice'
import { api, resetWorld } from '../helpers'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

let n = 0
function connection(caller: Caller): GatewayConnection {
  n += 1
  return { caller, sessionId: `voice-test-${n}-${Date.now()}`, send() {} }
}

const connected = (lobbyId: string, userId: string) =>
  (rawDatabase().query('SELECT voice_session_id FROM lobby_members WHERE lobby_id = ? AND user_id = ?').get(lobbyId, userId) as any)?.voice_session_id !== null
const deadline = (lobbyId: string) => (rawDatabase().query('SELECT idle_deadline FROM lobbies WHERE id = ?').get(lobbyId) as any).idle_deadline

describe('op 17 lobby voice states', () => {
  test('connects a member, holds the lobby open, and disconnecting re-arms the idle close', async () => {
    const { bot, players } = await setup(1)
    const p = players[0]
    const lobby = await createLobby(bot, { idle_timeout_seconds: 10, members: [{ id: p.id }] })
    const conn = connection({ kind: 'user', userId: p.id, sessionId: 's', sessionIdHash: 'h' })
    await handleLobbyVoiceStates(conn, [{ lobby_id: lobby.id, self_mute: true, self_deaf: false }])
    expect(connected(lobby.id, p.id)).toBe(true)
    expect(deadline(lobby.id)).toBeNull()
    clock.advance(60_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(200)

    await handleLobbyVoiceStates(conn, [])
    expect(connected(lobby.id, p.id)).toBe(false)
    expect(deadline(lobby.id)).toBeWithin(clock.now() + 9_000, clock.now() + 10_001)
    clock.advance(10_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
  })

  test('the end of the gateway session disconnects; non-members and other applications are ignored', async () => {
    const { app, bot, players } = await setup(2)
    const [member, outsider] = players
    const lobby = await createLobby(bot, { idle_timeout_seconds: 10, members: [{ id: member.id }] })
    const bearerConn = connection({ kind: 'bearer', userId: member.id, applicationId: app.id, scopes: ['lobbies.write'], grantId: 'g' })
    await handleLobbyVoiceStates(bearerConn, [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }, { lobby_id: 'junk' }, 'junk'])
    expect(connected(lobby.id, member.id)).toBe(true)
    await endVoiceSession(bearerConn)
    expect(connected(lobby.id, member.id)).toBe(false)
    expect(deadline(lobby.id)).not.toBeNull()

    await handleLobbyVoiceStates(connection({ kind: 'user', userId: outsider.id, sessionId: 's', sessionIdHash: 'h' }), [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }])
    expect(deadline(lobby.id)).not.toBeNull()
    const otherApp = connection({ kind: 'bearer', userId: member.id, applicationId: '1', scopes: [], grantId: 'g' })
    await handleLobbyVoiceStates(otherApp, [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }])
    expect(connected(lobby.id, member.id)).toBe(false)
  })

  test('removing the last connected member starts the countdown', async () => {
    const { bot, players } = await setup(1)
    const p = players[0]
    const lobby = await createLobby(bot, { idle_timeout_seconds: 30, members: [{ id: p.id }] })
    await handleLobbyVoiceStates(connection({ kind: 'user', userId: p.id, sessionId: 's', sessionIdHash: 'h' }), [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }])
    expect(deadline(lobby.id)).toBeNull()
    await api('DELETE', `/lobbies/${lobby.id}/members/${p.id}`, { token: bot })
    expect(deadline(lobby.id)).toBeWithin(clock.now() + 29_000, clock.now() + 30_001)
  })
})
