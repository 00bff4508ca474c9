// The hottest GETs are answered by Bun's router through the lane (src/http/lane.ts) instead of Elysia's pipeline. A
// client must not be able to tell: every case below is sent once over HTTP (the lane) and once through Elysia's own
// handler (`app.handle`), and the two answers must have the same status, body and headers (values that change per
// request aside: date, request id, rate-limit counters).
import { afterEach, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { laneAnswered } from '../../src/http/lane'
import { api, makeUser, resetWorld, server } from '../helpers'
import { join, makeGuild } from '../guilds/helpers'
import { createLobby, setup } from '../lobbies/helpers'

afterEach(resetWorld)

const PER_REQUEST = new Set([
  'date',
  'content-length',
  'x-request-id',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-reset-after',
])

async function snapshot(response: Response) {
  const text = await response.text()
  const headers: Record<string, string> = {}
  response.headers.forEach((value, name) => {
    if (!PER_REQUEST.has(name)) headers[name] = value
  })
  const body = text ? JSON.parse(text) : null
  // A 429's retry_after counts down between the two requests.
  if (typeof body?.retry_after === 'number') body.retry_after = 'a number'
  return {
    status: response.status,
    body,
    headers,
    id: response.headers.get('x-request-id'),
  }
}

/** The same request through the lane (a real socket) and through Elysia's handler. */
async function both(path: string, headers: Record<string, string> = {}) {
  const running = await server()
  const before = laneAnswered()
  const lane = await snapshot(await fetch(`${running.url}${path}`, { headers }))
  expect(laneAnswered()).toBe(before + 1) // Bun's router sent it to the lane
  const elysia = await snapshot(await running.app.handle(new Request(`http://localhost${path}`, { headers })))
  expect(laneAnswered()).toBe(before + 1) // and this one went through Elysia
  return { lane, elysia }
}

function same({ lane, elysia }: Awaited<ReturnType<typeof both>>, status: number) {
  expect(lane.status).toBe(status)
  expect({ ...lane, id: undefined }).toEqual({ ...elysia, id: undefined })
  expect(lane.id).toBeString()
}

describe('the lane answers as Elysia does', () => {
  test('GET /lobbies/{id}: the lobby, unknown lobby, another application, no token, a user token', async () => {
    const { bot, players } = await setup(1)
    const other = await setup(0)
    const lobby = await createLobby(bot, { metadata: { a: '1' }, members: [{ id: players[0].id }] })
    for (const prefix of ['/api/v9', '/api/v10', '/api']) {
      same(await both(`${prefix}/lobbies/${lobby.id}`, { authorization: bot }), 200)
      same(await both(`${prefix}/lobbies/${lobby.id}`, { authorization: players[0].bearer }), 200)
    }
    same(await both('/api/v9/lobbies/1234567890123456789', { authorization: bot }), 404)
    same(await both('/api/v9/lobbies/not-a-snowflake', { authorization: bot }), 404)
    same(await both(`/api/v9/lobbies/${lobby.id}`, { authorization: other.bot }), 404)
    same(await both(`/api/v9/lobbies/${lobby.id}`), 401)
    same(await both(`/api/v9/lobbies/${lobby.id}`, { authorization: 'Bot nonsense' }), 401)
    same(await both(`/api/v9/lobbies/${lobby.id}`, { authorization: players[0].token }), 403)
  })

  test('GET /lobbies/{id}/messages: pages, cursors, refusals of bad queries, a non-member bearer', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const ids: string[] = []
    for (let i = 0; i < 4; i++) {
      const r = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: `m${i}` } })
      ids.push(r.body.id)
    }
    const path = `/api/v9/lobbies/${lobby.id}/messages`
    same(await both(path, { authorization: bot }), 200)
    same(await both(path, { authorization: players[0].bearer }), 200)
    same(await both(`${path}?limit=2&before=${ids[3]}`, { authorization: bot }), 200)
    same(await both(`${path}?after=${ids[0]}`, { authorization: bot }), 200)
    same(await both(`${path}?limit=0`, { authorization: bot }), 400)
    same(await both(`${path}?before=nope`, { authorization: bot }), 400)
    same(await both(path, { authorization: players[1].bearer }), 404)
    same(await both('/api/v9/lobbies/123/messages', { authorization: bot }), 404)
  })

  test('GET /users/@me: user, bot and bearer callers; a bad token', async () => {
    const user = await makeUser()
    const { bot, players } = await setup(1)
    same(await both('/api/v9/users/@me', { authorization: user.token }), 200)
    same(await both('/api/v10/users/@me', { authorization: bot }), 200)
    same(await both('/api/users/@me', { authorization: players[0].bearer }), 200)
    same(await both('/api/v9/users/@me', { authorization: 'wrong' }), 401)
    same(await both('/api/v9/users/@me'), 401)
  })

  test('GET /experiments: a user, a fingerprint, the query flags and their refusals', async () => {
    const user = await makeUser()
    const anonymous = (await api('GET', '/experiments')).body.fingerprint as string
    same(await both('/api/v9/experiments', { authorization: user.token }), 200)
    same(await both('/api/v9/experiments?with_guild_experiments=true', { authorization: user.token }), 200)
    same(await both('/api/v9/experiments?platform=DEVELOPER_PORTAL', { authorization: user.token }), 200)
    same(await both('/api/v9/experiments', { 'x-fingerprint': anonymous }), 200)
    same(await both('/api/v9/experiments?with_guild_experiments=maybe', { authorization: user.token }), 400)
    same(await both('/api/v9/experiments?platform=NOPE', { authorization: user.token }), 400)
    same(await both('/api/v9/experiments?platform=DEVELOPER_PORTAL'), 401)
    same(await both('/api/v9/experiments', { authorization: 'wrong' }), 401)
  })

  test('GET /channels/{id}/messages: pages, cursors, refusals of bad queries, a non-member, no token', async () => {
    const { owner, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    const ids: string[] = []
    for (let i = 0; i < 5; i++) {
      const r = await api('POST', `/channels/${channelId}/messages`, {
        token: member.token,
        body: { content: `m${i}` },
      })
      ids.push(r.body.id)
    }
    const path = `/api/v9/channels/${channelId}/messages`
    same(await both(path, { authorization: owner.token }), 200)
    same(await both(path, { authorization: member.token }), 200) // the cached page, as sent to the owner
    same(await both(`${path}?limit=2`, { authorization: owner.token }), 200)
    same(await both(`${path}?limit=2&before=${ids[3]}`, { authorization: owner.token }), 200)
    same(await both(`${path}?after=${ids[1]}`, { authorization: owner.token }), 200)
    same(await both(`${path}?around=${ids[2]}&limit=3`, { authorization: owner.token }), 200)
    same(await both(`${path}?limit=0`, { authorization: owner.token }), 400)
    same(await both(`${path}?limit=101&before=x`, { authorization: owner.token }), 400)
    same(await both(path, { authorization: (await makeUser()).token }), 404)
    same(await both('/api/v9/channels/123/messages', { authorization: owner.token }), 404)
    same(await both(path), 401)
  })

  test('CORS headers for the web origin, and a 429 past the route limit, with the same headers', async () => {
    const user = await makeUser()
    const saved = config()
    setConfig({ ...saved, webUrl: 'http://web.example' })
    try {
      same(await both('/api/v9/users/@me', { authorization: user.token, origin: 'http://web.example' }), 200)
      same(await both('/api/v9/users/@me', { authorization: user.token, origin: 'http://elsewhere.example' }), 200)
    } finally {
      setConfig(saved)
    }
    // 50 per second per caller: the lane and Elysia count in the same window.
    setConfig({ ...config(), routeRateLimits: true })
    const running = await server()
    const statuses: number[] = []
    for (let i = 0; i < 60; i++) {
      const r = await fetch(`${running.url}/api/v9/users/@me`, { headers: { authorization: user.token } })
      statuses.push(r.status)
      await r.arrayBuffer()
    }
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(50)
    expect(statuses.at(-1)).toBe(429)
    try {
      same(await both('/api/v9/users/@me', { authorization: user.token }), 429)
    } finally {
      setConfig({ ...config(), routeRateLimits: false })
    }
  })
})
