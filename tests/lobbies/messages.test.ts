import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { snowflake } from '../../src/core/snowflake'
import { api, makeApp, resetWorld } from '../helpers'
import { rawBatch } from '../db/raw'
import { createLobby, metadata, setup } from './helpers'

afterEach(resetWorld)

describe('POST /lobbies/{id}/messages', () => {
  test('an OAuth2 member sends: 201 and the lobby message object', async () => {
    const { app, bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const r = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: players[0].bearer,
      body: { content: 'hello', metadata: { kind: 'chat' } },
    })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      id: expect.any(String),
      type: 0,
      content: 'hello',
      lobby_id: lobby.id,
      channel_id: lobby.id,
      metadata: { kind: 'chat' },
      flags: 0,
      application_id: app.id,
    })
    expect(r.body.author.id).toBe(players[0].id)
    // The creating application's bot may send too, as its bot user.
    const viaBot = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: bot,
      body: { content: 'from the game' },
    })
    expect(viaBot.status).toBe(201)
    expect(viaBot.body.author.bot).toBe(true)
    expect(viaBot.body.metadata).toBeUndefined()
  })

  test('content 1-4000, metadata limits, members only, lobbies.write, own application', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const send = (body: object, token = players[0].bearer) =>
      api('POST', `/lobbies/${lobby.id}/messages`, { token, body })
    expect((await send({ content: 'x'.repeat(4000) })).status).toBe(201)
    const long = await send({ content: 'x'.repeat(4001) })
    expect(long.status).toBe(400)
    expect(long.body.errors.content).toBeDefined()
    expect((await send({ content: '' })).status).toBe(400)
    expect((await send({ content: '   ' })).status).toBe(400)
    expect((await send({})).status).toBe(400)
    expect((await send({ content: 'm', metadata: metadata(25, 1024, 1024) })).status).toBe(201)
    expect((await send({ content: 'm', metadata: metadata(26) })).status).toBe(400)
    expect((await send({ content: 'm', metadata: metadata(1, 1, 1025) })).status).toBe(400)
    const outsider = await send({ content: 'hi' }, players[1].bearer)
    expect(outsider.status).toBe(404)
    expect(outsider.body.code).toBe(10031)
    expect((await send({ content: 'hi' }, players[0].token)).body.code).toBe(20002)
    const { players: scoped } = await setup(1, 'identify')
    expect((await send({ content: 'hi' }, scoped[0].bearer)).status).toBe(403)
    const other = await makeApp()
    expect((await send({ content: 'hi' }, `Bot ${other.bot_token}`)).body.code).toBe(10031)
  })
})

describe('GET /lobbies/{id}/messages', () => {
  test('newest first, default 50, limit 1-200', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    // One message through the API, the other 204 written straight to the table (posting them would take 20 s at the
    // route's rate limit).
    const seed = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'm0' } })
    await rawBatch(
      'INSERT INTO lobby_messages (id, lobby_id, application_id, author_id, content, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      Array.from({ length: 204 }, (_, i) => [
        snowflake(),
        lobby.id,
        lobby.application_id,
        seed.body.author.id,
        `m${i + 1}`,
        clock.now(),
      ]),
    )
    const get = (q = '') => api('GET', `/lobbies/${lobby.id}/messages${q}`, { token: players[0].bearer })
    const first = await get()
    expect(first.status).toBe(200)
    expect(first.body).toHaveLength(50)
    expect(first.body[0].content).toBe('m204')
    expect(first.body[49].content).toBe('m155')
    expect((await get('?limit=1')).body.map((m: any) => m.content)).toEqual(['m204'])
    expect((await get('?limit=200')).body).toHaveLength(200)
    for (const bad of ['0', '201', 'x', '-1']) {
      const r = await get(`?limit=${bad}`)
      expect(r.status).toBe(400)
      expect(r.body.errors.limit).toBeDefined()
    }
    expect((await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).status).toBe(200)
    expect((await api('GET', `/lobbies/${lobby.id}/messages`, { token: players[0].token })).body.code).toBe(20002)
  })
})
