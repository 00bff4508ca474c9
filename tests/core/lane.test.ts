// The hottest routes are answered by Bun's router through the lane (src/http/lane.ts) instead of Elysia's pipeline. A
// client must not be able to tell: every case below is sent once over HTTP (the lane) and once through Elysia's own
// handler (`app.handle`), and the two answers must have the same status, body and headers (values that change per
// request aside: date, request id, rate-limit counters). Every lane route (the `hot` endpoints of the declarations,
// http/endpoint.ts) gets the common cases below, and must have its own cases here (CASES).
import { afterEach, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { hotRoutes } from '../../src/http/endpoint'
import { laneAnswered } from '../../src/http/lane'
import { modules } from '../../src/modules'
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

/** A POST through the lane and through Elysia; a created message's id and timestamp differ between the two. */
async function bothPost(path: string, body: string | Uint8Array | null, headers: Record<string, string> = {}) {
  const running = await server()
  const init = () => ({ method: 'POST', headers, body: body ?? undefined })
  const before = laneAnswered()
  const lane = await snapshot(await fetch(`${running.url}${path}`, init()))
  expect(laneAnswered()).toBe(before + 1)
  const elysia = await snapshot(await running.app.handle(new Request(`http://localhost${path}`, init())))
  expect(laneAnswered()).toBe(before + 1)
  for (const side of [lane, elysia])
    if (side.body && typeof side.body === 'object' && 'timestamp' in side.body) {
      side.body.id = 'an id'
      side.body.timestamp = 'a time'
    }
  return { lane, elysia }
}

function same({ lane, elysia }: Awaited<ReturnType<typeof both>>, status: number) {
  expect(lane.status).toBe(status)
  expect({ ...lane, id: undefined }).toEqual({ ...elysia, id: undefined })
  expect(lane.id).toBeString()
}

/** Every route Bun's router sends to the lane, from the modules' declarations. */
const LANE = modules.flatMap((m) => hotRoutes(m.endpoints ?? []))
const UNKNOWN_ID = '1234567890123456789'

/** The lane routes whose own cases are written below (a new hot route fails the first test until it has them). */
const CASES = [
  'GET /lobbies/:lobbyId',
  'GET /lobbies/:lobbyId/messages',
  'POST /lobbies/:lobbyId/messages',
  'GET /users/@me',
  'GET /auth/sessions',
  'GET /experiments',
  'GET /channels/:channelId/messages',
  'POST /partner-sdk/token/bot',
]

describe('every lane route', () => {
  test('has its own cases below', () => {
    expect(LANE.map((r) => `${r.method} ${r.path}`).sort()).toEqual([...CASES].sort())
  })

  for (const route of LANE)
    test(`${route.method} ${route.path}: no token, a bad token, unknown ids, an empty body`, async () => {
      const { bot } = await setup(0)
      const path = `/api/v9${route.path.replace(/:[^/]+/g, UNKNOWN_ID)}`
      const send =
        route.method === 'GET'
          ? both
          : (p: string, h: Record<string, string> = {}) =>
              bothPost(p, '{}', { 'content-type': 'application/json', ...h })
      const noToken = await send(path)
      if (route.auth !== null) same(noToken, 401)
      // An open route answers anonymous callers (GET /experiments mints a new fingerprint each time).
      else expect(noToken.elysia.status).toBe(noToken.lane.status)
      const badToken = await send(path, { authorization: 'Bot nonsense' })
      same(badToken, badToken.lane.status)
      const unknown = await send(path, { authorization: bot })
      same(unknown, unknown.lane.status)
    })
})

describe('the lane answers as Elysia does', () => {
  test('GET /lobbies/{id}: the lobby, unknown lobby, another application, no token, a member and a stranger', async () => {
    const { bot, players } = await setup(2)
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
    // User sessions are refused on lobby routes (spec §4.1), a member's as a stranger's.
    same(await both(`/api/v9/lobbies/${lobby.id}`, { authorization: players[0].token }), 403)
    same(await both(`/api/v9/lobbies/${lobby.id}`, { authorization: players[1].token }), 403)
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

  test('GET /auth/sessions: a user with several sessions; bot, bearer and no token refused', async () => {
    const user = await makeUser()
    for (let i = 0; i < 3; i++)
      await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
    const { bot, players } = await setup(1)
    same(await both('/api/v9/auth/sessions', { authorization: user.token }), 200)
    same(await both('/api/v9/auth/sessions', { authorization: bot }), 403)
    same(await both('/api/v9/auth/sessions', { authorization: players[0].bearer }), 401)
    same(await both('/api/v9/auth/sessions'), 401)
    const running = await server()
    const reply = await fetch(`${running.url}/api/v9/auth/sessions`, { headers: { authorization: user.token } })
    const sessions = (await reply.json()) as { user_sessions: unknown[] }
    expect(sessions.user_sessions).toHaveLength(4)
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

  test('POST /lobbies/{id}/messages: bodies of every shape, the enforced nonce, refusals in the order Elysia judges them', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const path = `/api/v9/lobbies/${lobby.id}/messages`
    const json = { 'content-type': 'application/json' }
    const asBot = { ...json, authorization: bot }
    same(await bothPost(path, '{"content":"hi"}', asBot), 201)
    same(await bothPost(path, '{"content":"hi","nonce":7,"tts":true,"metadata":{"k":"v"},"x":1}', asBot), 201)
    same(await bothPost(path, '{"content":"hi"}', { ...asBot, 'content-type': 'application/json; charset=utf-8' }), 201)
    same(await bothPost(path, '{"content":"hi"}', { ...json, authorization: players[0].bearer }), 201)
    // The enforced nonce: the lane's post is the original, Elysia's the retry (200, the same message).
    const enforced = await bothPost(path, '{"content":"once","nonce":"n-1","enforce_nonce":true}', asBot)
    expect(enforced.lane.status).toBe(201)
    expect(enforced.elysia.status).toBe(200)
    expect(enforced.elysia.body).toEqual(enforced.lane.body)
    const multipart = '--b\r\nContent-Disposition: form-data; name="payload_json"\r\n\r\n{"content":"mp"}\r\n--b--\r\n'
    same(
      await bothPost(path, multipart, { authorization: bot, 'content-type': 'multipart/form-data; boundary=b' }),
      201,
    )
    same(await bothPost(path, JSON.stringify({ content: 'x'.repeat(4000) }), asBot), 201)
    // Refusals of the body: its form, its JSON, its type, its fields (every error at once), its size.
    same(await bothPost(path, null, { authorization: bot }), 400)
    same(await bothPost(path, 'null', asBot), 400)
    same(await bothPost(path, '[1]', asBot), 400)
    same(await bothPost(path, '{"content":', asBot), 400)
    same(await bothPost(path, new Uint8Array([123, 34, 99, 34, 58, 34, 0xff, 34, 125]), asBot), 400)
    same(await bothPost(path, '{"content":"hi"}', { authorization: bot, 'content-type': 'text/plain' }), 415)
    same(await bothPost(path, '{"content":"hi"}', { authorization: bot }), 415)
    same(await bothPost(path, JSON.stringify({ content: 'x'.repeat(4001) }), asBot), 400)
    same(await bothPost(path, '{"content":"   "}', asBot), 400)
    same(
      await bothPost(path, '{"content":5,"nonce":{},"tts":3,"enforce_nonce":4,"flags":"x","metadata":7}', asBot),
      400,
    )
    same(await bothPost(path, '{"content":"hi","metadata":{"a":1}}', asBot), 400)
    // The caller: none, a bad token, a user token, a bearer not in the lobby; the lobby: unknown, another app's.
    same(await bothPost(path, '{"content":"hi"}', json), 401)
    same(await bothPost(path, '{"content":"hi"}', { ...json, authorization: 'Bot nonsense' }), 401)
    same(await bothPost(path, '{"content":"hi"}', { ...json, authorization: players[0].token }), 403)
    same(await bothPost(path, '{"content":"hi"}', { ...json, authorization: players[1].bearer }), 404)
    same(await bothPost('/api/v9/lobbies/1234567890123456789/messages', '{"content":"hi"}', asBot), 404)
    same(
      await bothPost(`/api/v10/lobbies/${lobby.id}/messages`, '{"content":"hi"}', {
        ...json,
        authorization: (await setup(0)).bot,
      }),
      404,
    )
    // A bad body is judged before the caller, as Elysia parses before it resolves the caller.
    same(await bothPost(path, '{"content":', json), 400)
    same(
      await bothPost(path, '{"content":"hi"}', { authorization: players[0].token, 'content-type': 'text/plain' }),
      415,
    )
    // Past the route limit, before the body is read.
    setConfig({ ...config(), routeRateLimits: true })
    try {
      const running = await server()
      let last = 0
      for (let i = 0; i < 12 && last !== 429; i++) {
        const r = await fetch(`${running.url}${path}`, { method: 'POST', headers: asBot, body: '{"content":"burst"}' })
        last = r.status
        await r.arrayBuffer()
      }
      expect(last).toBe(429)
      same(await bothPost(path, '{"content":', asBot), 429)
    } finally {
      setConfig({ ...config(), routeRateLimits: false })
    }
  })

  test('POST /partner-sdk/token/bot: a new player and a known one, bodies at and past the limits, other callers refused', async () => {
    const { bot, players } = await setup(1)
    const path = '/api/v9/partner-sdk/token/bot'
    const post = (body: string, headers: Record<string, string>) =>
      bothPost(path, body, { 'content-type': 'application/json', ...headers })
    // Each call issues new tokens: the two answers differ there and nowhere else.
    const issued = async (body: unknown) => {
      const r = await post(JSON.stringify(body), { authorization: bot })
      for (const side of [r.lane, r.elysia]) {
        expect(side.body.access_token).toBeString()
        side.body.access_token = 'a token'
        side.body.id_token = 'an id token'
      }
      return r
    }
    same(await issued({ external_user_id: 'player-1', preferred_global_name: 'Ann' }), 200)
    same(await issued({ external_user_id: 'player-1' }), 200)
    same(await issued({ external_user_id: 'x'.repeat(128), preferred_global_name: 'n'.repeat(32) }), 200)
    for (const body of [
      { external_user_id: '' },
      { external_user_id: 'x'.repeat(129) },
      { external_user_id: 'player-2', preferred_global_name: 'n'.repeat(33) },
      { external_user_id: 42 },
      {},
    ])
      same(await post(JSON.stringify(body), { authorization: bot }), 400)
    same(await post('{"external_user_id":', { authorization: bot }), 400)
    const user = await post(JSON.stringify({ external_user_id: 'player-3' }), { authorization: players[0].token })
    expect(user.lane.status).toBeGreaterThanOrEqual(401)
    same(user, user.lane.status)
    same(await post(JSON.stringify({ external_user_id: 'player-3' }), {}), 401)
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
