import { afterEach, describe, expect, test } from 'bun:test'
import type { Caller } from '../../src/core/caller'
import { clock } from '../../src/core/clock'
import { sweepIdleLobbies } from '../../src/lobbies/idle'
import { markConnected, markDisconnected } from '../../src/lobbies/voice-presence'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { connect } from './fake-gateway'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

const userCaller = (id: string): Caller => ({ kind: 'user', userId: id, sessionId: `s-${id}`, sessionIdHash: 'h' })

async function world() {
  const { app, bot, players } = await setup(2)
  const [a, b] = players
  const outsider = await makeUser()
  const other = await makeApp()
  const sockets = {
    bot: await connect({ kind: 'bot', userId: 'bot', applicationId: app.id }),
    otherBot: await connect({ kind: 'bot', userId: 'other-bot', applicationId: other.id }),
    a: await connect(userCaller(a.id)),
    b: await connect({
      kind: 'bearer',
      userId: b.id,
      applicationId: app.id,
      scopes: ['lobbies.write'],
      grantId: 'g',
      familyId: 'f',
    }),
    outsider: await connect(userCaller(outsider.id)),
  }
  const nobodyElse = () => {
    expect(sockets.outsider.types()).toEqual([])
    expect(sockets.otherBot.types()).toEqual([])
  }
  return { app, bot, a, b, sockets, nobodyElse }
}

describe('lobby events reach the members and the application bots, nobody else', () => {
  test('create, member add/update/remove, update, message, delete', async () => {
    const { app, bot, a, b, sockets, nobodyElse } = await world()
    const lobby = await createLobby(bot, { metadata: { m: '1' }, members: [{ id: a.id }] })
    const created = sockets.a.events('LOBBY_CREATE')
    expect(created).toHaveLength(1)
    expect(created[0]).toEqual({
      id: lobby.id,
      application_id: app.id,
      metadata: { m: '1' },
      members: [{ id: a.id, metadata: null, flags: 0, connected: false }],
      flags: 0,
      voice_states: [],
    })
    expect(sockets.bot.events('LOBBY_CREATE')).toHaveLength(1)
    expect(sockets.b.types()).toEqual([])

    await api('PUT', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot })
    const add = {
      member: { id: b.id, metadata: null, flags: 0, connected: false },
      lobby_id: lobby.id,
      application_id: app.id,
    }
    expect(sockets.a.events('LOBBY_MEMBER_ADD')).toEqual([add])
    expect(sockets.bot.events('LOBBY_MEMBER_ADD')).toEqual([add])
    expect(sockets.b.events('LOBBY_MEMBER_ADD')).toEqual([add])
    expect(sockets.b.events('LOBBY_CREATE')[0].id).toBe(lobby.id)

    await api('PUT', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot, body: { metadata: { ready: 'yes' } } })
    for (const s of [sockets.a, sockets.b, sockets.bot]) {
      expect(s.events('LOBBY_MEMBER_UPDATE')).toEqual([
        { ...add, member: { ...add.member, metadata: { ready: 'yes' } } },
      ])
    }

    await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: { m: '2' } } })
    for (const s of [sockets.a, sockets.b, sockets.bot])
      expect(s.events('LOBBY_UPDATE').map((l: any) => l.metadata)).toEqual([{ m: '2' }])

    const sent = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: bot,
      body: { content: 'hi', nonce: 'n1' },
    })
    for (const s of [sockets.a, sockets.b, sockets.bot]) {
      const [message] = s.events('LOBBY_MESSAGE_CREATE')
      expect(message).toMatchObject({ content: 'hi', lobby_id: lobby.id, type: 0, application_id: app.id, nonce: 'n1' })
      // The dispatch is the answer with `mentions`, nothing more or less.
      expect(message).toEqual({ ...sent.body, mentions: [] })
    }

    await api('DELETE', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot })
    expect(sockets.b.events('LOBBY_MEMBER_REMOVE')).toHaveLength(1)
    expect(sockets.b.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'removed' }])
    expect(sockets.a.events('LOBBY_MEMBER_REMOVE')[0].member.id).toBe(b.id)
    expect(sockets.a.events('LOBBY_DELETE')).toEqual([])

    // A removed member hears nothing more.
    sockets.b.clear()
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'after' } })
    expect(sockets.b.types()).toEqual([])

    await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })
    expect(sockets.a.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'deleted' }])
    expect(sockets.bot.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'deleted' }])
    expect(sockets.b.types()).toEqual([])
    nobodyElse()
  })

  test('PUT /lobbies: create announces to the creator, a join adds; @me leave sends delete + remove', async () => {
    const { a, b, sockets, nobodyElse, app } = await world()
    const lobby = (await api('PUT', '/lobbies', { token: a.bearer, body: { secret: 'ev' } })).body
    expect(sockets.a.events('LOBBY_CREATE')).toHaveLength(1)
    expect(sockets.bot.events('LOBBY_CREATE')).toHaveLength(1)
    await api('PUT', '/lobbies', { token: b.bearer, body: { secret: 'ev' } })
    expect(sockets.a.events('LOBBY_MEMBER_ADD').map((e: any) => e.member.id)).toEqual([b.id])
    expect(sockets.a.events('LOBBY_CREATE')).toHaveLength(1)
    await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: b.bearer })
    expect(sockets.b.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'removed' }])
    expect(sockets.a.events('LOBBY_MEMBER_REMOVE')).toEqual([
      { member: { id: b.id, metadata: null, flags: 0, connected: false }, lobby_id: lobby.id, application_id: app.id },
    ])
    nobodyElse()
  })

  test('PATCH members and bulk emit add, update and remove; removed members unsubscribe', async () => {
    const { bot, a, b, sockets, nobodyElse } = await world()
    const lobby = await createLobby(bot, { members: [{ id: a.id }] })
    await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { members: [{ id: b.id }] } })
    expect(sockets.a.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'removed' }])
    expect(sockets.a.events('LOBBY_UPDATE')).toEqual([])
    expect(sockets.b.events('LOBBY_UPDATE')[0].members).toEqual([
      { id: b.id, metadata: null, flags: 0, connected: false },
    ])
    expect(sockets.bot.events('LOBBY_MEMBER_ADD')).toHaveLength(1)
    expect(sockets.bot.events('LOBBY_MEMBER_REMOVE')).toHaveLength(1)
    for (const s of Object.values(sockets)) s.clear()
    await api('POST', `/lobbies/${lobby.id}/members/bulk`, { token: bot, body: [{ id: a.id }, { id: b.id, flags: 1 }] })
    expect(sockets.bot.types().sort()).toEqual(['LOBBY_MEMBER_ADD', 'LOBBY_MEMBER_UPDATE'])
    expect(sockets.a.events('LOBBY_CREATE')).toHaveLength(1)
    await api('POST', `/lobbies/${lobby.id}/members/bulk`, { token: bot, body: [{ id: a.id, remove_member: true }] })
    expect(sockets.b.events('LOBBY_MEMBER_REMOVE').map((e: any) => e.member.id)).toEqual([a.id])
    nobodyElse()
  })

  test('a session identifying later joins its lobbies; call connect and disconnect; idle close deletes', async () => {
    const { app, bot, a, b, sockets, nobodyElse } = await world()
    const lobby = await createLobby(bot, { idle_timeout_seconds: 30, members: [{ id: a.id }, { id: b.id }] })
    const late = await connect(userCaller(a.id))
    // An OAuth2 session of another application does not hear this application's lobbies.
    const elsewhere = await connect({
      kind: 'bearer',
      userId: a.id,
      applicationId: '42',
      scopes: [],
      grantId: 'g',
      familyId: 'f',
    })
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'x' } })
    expect(late.events('LOBBY_MESSAGE_CREATE')).toHaveLength(1)
    expect(elsewhere.types()).toEqual([])

    // The voice domain reports b's peer connection up (tests/voice/ drive this with real WebRTC peers).
    await markConnected(lobby.id, b.id, sockets.b.conn.sessionId, { selfMute: false, selfDeaf: false })
    const connectEvent = {
      member: { id: b.id, metadata: null, flags: 0, connected: true },
      lobby_id: lobby.id,
      application_id: app.id,
    }
    expect(sockets.a.events('LOBBY_MEMBER_CONNECT')).toEqual([connectEvent])
    expect(sockets.bot.events('LOBBY_MEMBER_CONNECT')).toEqual([connectEvent])
    const state = {
      lobby_id: lobby.id,
      channel_id: null,
      user_id: b.id,
      session_id: sockets.b.conn.sessionId,
      deaf: false,
      mute: false,
      self_deaf: false,
      self_mute: false,
      self_video: false,
      suppress: false,
      request_to_speak_timestamp: null,
      connected: true,
    }
    expect(sockets.a.events('LOBBY_VOICE_STATE_UPDATE')).toEqual([state])
    expect(sockets.bot.events('LOBBY_VOICE_STATE_UPDATE')).toEqual([state])
    await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: {} })
    expect(
      sockets.a
        .events('LOBBY_UPDATE')[0]
        .members.map((m: any) => m.connected)
        .sort(),
    ).toEqual([false, true])

    clock.advance(60_000)
    await sweepIdleLobbies()
    expect(sockets.a.events('LOBBY_DELETE')).toEqual([])

    await markDisconnected(lobby.id, b.id, sockets.b.conn.sessionId)
    expect(sockets.a.events('LOBBY_MEMBER_DISCONNECT').map((e: any) => e.member.id)).toEqual([b.id])
    // Out of the call, but a and b are still on the Gateway: the lobby stays active.
    clock.advance(30_000)
    await sweepIdleLobbies()
    expect(sockets.bot.events('LOBBY_DELETE')).toEqual([])
    // Once their sessions end, the countdown runs and the idle close deletes the lobby.
    for (const s of [late, elsewhere, sockets.a, sockets.b]) await s.close()
    clock.advance(30_000)
    await sweepIdleLobbies()
    expect(sockets.bot.events('LOBBY_DELETE')).toEqual([{ id: lobby.id, reason: 'deleted' }])
    nobodyElse()
  })
})
