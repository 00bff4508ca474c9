// Lobby voice presence as the voice domain reports it (src/lobbies/voice.ts): who may join a call, connected,
// self_mute/self_deaf, disconnected, and the idle countdown. The calls themselves are in tests/voice/.
import { afterEach, describe, expect, test } from 'bun:test'
import type { Caller } from '../../src/core/caller'
import { clock } from '../../src/core/clock'
import { sweepIdleLobbies } from '../../src/lobbies/idle'
import { callAccess, markConnected, markDisconnected, markVoiceFlags } from '../../src/lobbies/voice-presence'
import { api, resetWorld } from '../helpers'
import { rawRow } from '../db/raw'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

const row = (lobbyId: string, userId: string) =>
  rawRow(
    'SELECT voice_session_id, self_mute, self_deaf FROM lobby_members WHERE lobby_id = ? AND user_id = ?',
    lobbyId,
    userId,
  )
const deadline = async (lobbyId: string) =>
  (await rawRow('SELECT idle_deadline FROM lobbies WHERE id = ?', lobbyId)).idle_deadline
const user = (id: string): Caller => ({ kind: 'user', userId: id, sessionId: 's', sessionIdHash: 'h' })
const quiet = { selfMute: false, selfDeaf: false }

describe('lobby voice presence', () => {
  test('connected holds the lobby open; disconnected re-arms the idle close', async () => {
    const { bot, players } = await setup(1)
    const p = players[0]!
    const lobby = await createLobby(bot, { idle_timeout_seconds: 10, members: [{ id: p.id }] })
    expect(await markConnected(lobby.id, p.id, 'session-1', { selfMute: true, selfDeaf: false })).toBe(true)
    expect(await row(lobby.id, p.id)).toEqual({ voice_session_id: 'session-1', self_mute: 1, self_deaf: 0 })
    expect(await deadline(lobby.id)).toBeNull()
    clock.advance(60_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(200)

    // Flags change only for the session that is connected.
    await markVoiceFlags(lobby.id, p.id, 'other-session', { selfMute: false, selfDeaf: true })
    expect((await row(lobby.id, p.id)).self_deaf).toBe(0)
    await markVoiceFlags(lobby.id, p.id, 'session-1', { selfMute: false, selfDeaf: true })
    expect(await row(lobby.id, p.id)).toEqual({ voice_session_id: 'session-1', self_mute: 0, self_deaf: 1 })

    // Another session's end does not disconnect this one.
    await markDisconnected(lobby.id, p.id, 'other-session')
    expect((await row(lobby.id, p.id)).voice_session_id).toBe('session-1')
    await markDisconnected(lobby.id, p.id, 'session-1')
    expect(await row(lobby.id, p.id)).toEqual({ voice_session_id: null, self_mute: 0, self_deaf: 0 })
    expect(await deadline(lobby.id)).toBeWithin(clock.now() + 9_000, clock.now() + 10_001)
    clock.advance(10_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
  })

  test('only members may join a call: not outsiders, bots, other applications or unknown lobbies', async () => {
    const { app, bot, players } = await setup(2)
    const [member, outsider] = players
    const lobby = await createLobby(bot, { idle_timeout_seconds: 10, members: [{ id: member!.id }] })
    expect(await callAccess(user(member!.id), lobby.id)).toEqual({ lobbyId: lobby.id, idleTimeoutMs: 10_000 })
    expect(
      await callAccess(
        {
          kind: 'bearer',
          userId: member!.id,
          applicationId: app.id,
          scopes: ['lobbies.write'],
          grantId: 'g',
          familyId: 'f',
        },
        lobby.id,
      ),
    ).toBeDefined()
    // Its own application's lobby, but without lobbies.write: the session does not see the lobby, nor its call.
    expect(
      await callAccess(
        {
          kind: 'bearer',
          userId: member!.id,
          applicationId: app.id,
          scopes: ['identify'],
          grantId: 'g',
          familyId: 'f',
        },
        lobby.id,
      ),
    ).toBeUndefined()
    expect(
      await callAccess(
        { kind: 'bearer', userId: member!.id, applicationId: '1', scopes: [], grantId: 'g', familyId: 'f' },
        lobby.id,
      ),
    ).toBeUndefined()
    expect(await callAccess(user(outsider!.id), lobby.id)).toBeUndefined()
    expect(await callAccess({ kind: 'bot', userId: 'b', applicationId: app.id }, lobby.id)).toBeUndefined()
    expect(await callAccess(user(member!.id), '1234567890123456789')).toBeUndefined()
    expect(await markConnected(lobby.id, outsider!.id, 's', quiet)).toBe(false)
    expect(await deadline(lobby.id)).not.toBeNull()
  })

  test('removing the last connected member starts the countdown', async () => {
    const { bot, players } = await setup(1)
    const p = players[0]!
    const lobby = await createLobby(bot, { idle_timeout_seconds: 30, members: [{ id: p.id }] })
    await markConnected(lobby.id, p.id, 's', quiet)
    expect(await deadline(lobby.id)).toBeNull()
    await api('DELETE', `/lobbies/${lobby.id}/members/${p.id}`, { token: bot })
    expect(await deadline(lobby.id)).toBeWithin(clock.now() + 29_000, clock.now() + 30_001)
  })
})
