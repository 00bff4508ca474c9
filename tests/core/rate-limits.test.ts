// Per-route rate limits with Discord's headers on every response, and a real Discord library pacing itself by them.
import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from 'bun:test'
import { REST, RESTEvents } from '@discordjs/rest'
import { config, setConfig } from '../../src/config'
import { cachedCallers, canonicalAuthorization, forgetCallers, setTokenResolvers } from '../../src/core/caller'
import { clock } from '../../src/core/clock'
import { routeLimits } from '../../src/http/endpoint'
import { DEFAULT_ROUTE_LIMIT } from '../../src/http/rate-limits'
import { lobbyEndpoints } from '../../src/lobbies/routes'
import { modules } from '../../src/modules'
import { withConfig } from '../auth/helpers'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

afterEach(resetWorld)
// The suite's shared server runs without per-route refusals (tests/preload.ts); this file is where they are tested.
beforeAll(async () => {
  await server()
  setConfig({ ...config(), routeRateLimits: true })
})
afterAll(() => setConfig({ ...config(), routeRateLimits: false }))

// The message POST's own limit, as its endpoint declares it.
const MESSAGES = routeLimits(lobbyEndpoints).find((r) => r.path === '/lobbies/:lobbyId/messages')!
const HEADERS = [
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-reset-after',
  'x-ratelimit-bucket',
]
const raw = (method: string, path: string, options: Parameters<typeof api>[2] = {}) =>
  api(method, path, { ...options, rateLimited: 'return' })

/**
 * Send until one is refused; returns the answers of the window that ended in the refusal (the window is read from
 * X-RateLimit-Reset, so a slow machine crossing into a new window midway does not matter).
 */
async function untilLimited(send: () => Promise<{ status: number; headers: Headers; body: any }>) {
  const all: Awaited<ReturnType<typeof send>>[] = []
  for (let i = 0; i < 500; i++) {
    const r = await send()
    all.push(r)
    if (r.status === 429) {
      const reset = r.headers.get('x-ratelimit-reset')
      return { over: r, window: all.filter((x) => x !== r && x.headers.get('x-ratelimit-reset') === reset) }
    }
  }
  throw new Error('never limited')
}

function rateHeaders(r: { headers: Headers }) {
  return Object.fromEntries(HEADERS.map((h) => [h, r.headers.get(h)]))
}

describe('headers', () => {
  test('every API answer carries the five headers: successes, refusals, bad bodies, unauthenticated', async () => {
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    // Each answer with the time its request left: its window ends after that (a slow login must not age the others).
    const timed = async (...call: Parameters<typeof raw>) => {
      const sent = clock.now()
      return { ...(await raw(...call)), sent }
    }
    const replies = [
      await timed('GET', '/users/@me', { token: bot }),
      await timed('GET', '/users/@me', { token: 'not a token' }),
      await timed('GET', '/lobbies/123456789012345678', { token: bot }),
      await timed('POST', '/lobbies', { token: bot, raw: '{not json' }),
      await timed('POST', '/lobbies', { token: bot, body: { idle_timeout_seconds: 1 } }),
      await timed('POST', '/auth/login', { body: { login: 'nobody@example.test', password: 'whatever it is' } }),
      await timed('GET', '/auth/location-metadata'),
    ]
    expect(replies.map((r) => r.status)).toEqual([200, 401, 404, 400, 400, 400, 200])
    for (const r of replies) {
      const h = rateHeaders(r)
      expect(Number(h['x-ratelimit-limit'])).toBeGreaterThan(0)
      expect(Number(h['x-ratelimit-remaining'])).toBeLessThan(Number(h['x-ratelimit-limit']))
      expect(Number(h['x-ratelimit-reset'])).toBeGreaterThanOrEqual(r.sent / 1000 - 0.001)
      expect(Number(h['x-ratelimit-reset-after'])).toBeGreaterThan(0)
      expect(Number(h['x-ratelimit-reset-after'])).toBeLessThanOrEqual(DEFAULT_ROUTE_LIMIT.windowMs / 1000)
      expect(h['x-ratelimit-bucket']).toMatch(/^[0-9a-f]{32}$/)
    }
  })

  test('the bucket is a hash of the route: the same under /api, /api/v9 and /api/v10 and for every lobby; different per route and method', async () => {
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const a = await createLobby(bot)
    const b = await createLobby(bot)
    const bucket = async (method: string, path: string) =>
      (await raw(method, path, { token: bot })).headers.get('x-ratelimit-bucket')
    const lobbyA = await bucket('GET', `/lobbies/${a.id}`)
    expect(await bucket('GET', `/api/v10/lobbies/${a.id}`)).toBe(lobbyA)
    expect(await bucket('GET', `/api/lobbies/${b.id}`)).toBe(lobbyA)
    expect(await bucket('GET', `/lobbies/${a.id}/messages`)).not.toBe(lobbyA)
    expect(await bucket('DELETE', `/lobbies/${b.id}`)).not.toBe(lobbyA)
    expect(await bucket('GET', '/users/@me')).not.toBe(lobbyA)
  })

  test('web pages and unknown routes carry none', async () => {
    const { url } = await server()
    expect((await fetch(`${url}/login`)).headers.get('x-ratelimit-bucket')).toBeNull()
    expect((await raw('GET', '/no/such/route')).headers.get('x-ratelimit-bucket')).toBeNull()
  })
})

describe('limits', () => {
  test(`lobby messages: ${MESSAGES.limit} per second per lobby and caller pass, one more is 429 with Discord's body and headers`, async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const other = await createLobby(bot, { members: [{ id: players[0].id }] })
    const send = (lobbyId: string, token = players[0].bearer) =>
      raw('POST', `/lobbies/${lobbyId}/messages`, { token, body: { content: 'hi' } })
    const { over, window } = await untilLimited(() => send(lobby.id))
    expect(window.map((r) => r.status)).toEqual(Array(MESSAGES.limit).fill(201))
    expect(window.map((r) => r.headers.get('x-ratelimit-remaining'))).toEqual(
      Array.from({ length: MESSAGES.limit }, (_, i) => String(MESSAGES.limit - 1 - i)),
    )
    expect(over.status).toBe(429)
    expect(over.body).toEqual({
      message: 'You are being rate limited.',
      retry_after: expect.any(Number),
      global: false,
      code: 0,
    })
    expect(over.body.retry_after).toBeGreaterThan(0)
    expect(over.body.retry_after).toBeLessThanOrEqual(MESSAGES.windowMs / 1000)
    expect(over.headers.get('retry-after')).toBe(String(Math.ceil(over.body.retry_after)))
    expect(over.headers.get('x-ratelimit-scope')).toBe('user')
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0')
    // Another lobby (the major parameter) and another caller have their own counts.
    expect((await send(other.id)).status).toBe(201)
    expect((await send(lobby.id, bot)).status).toBe(201)
    // The refused request was not counted as a message; the next window passes again.
    clock.advance(MESSAGES.windowMs)
    expect((await send(lobby.id)).status).toBe(201)
  })

  test('one spelling per credential: Bot and Bearer as clients send them are kept, every other spelling written so', () => {
    const kept = ['Bot abc.DEF-_', 'Bearer abc', 'MTAx.raw-user-token', 'Bot a\nb', 'Botabc', 'Bearer\tabc x']
    for (const value of kept.slice(0, 3)) expect(canonicalAuthorization(value)).toBe(value)
    // A line break inside is not a scheme and a token (the pattern's `.`), a missing space is no scheme.
    expect(canonicalAuthorization(kept[3])).toBe(kept[3])
    expect(canonicalAuthorization(kept[4])).toBe(kept[4])
    expect(canonicalAuthorization(kept[5])).toBe('Bearer abc x')
    expect(canonicalAuthorization('bot abc')).toBe('Bot abc')
    expect(canonicalAuthorization('BEARER  abc')).toBe('Bearer abc')
    expect(canonicalAuthorization(' Bot abc')).toBe('Bot abc')
    expect(canonicalAuthorization('Bot abc ')).toBe('Bot abc')
    expect(canonicalAuthorization('Bot abc\u00a0')).toBe('Bot abc')
    expect(canonicalAuthorization('Bot \tabc')).toBe('Bot abc')
    expect(canonicalAuthorization('Bot ')).toBe('Bot')
  })

  test('a bot token in any spelling is one caller: one message window per lobby, one token cache entry', async () => {
    const { app, players } = await setup(1)
    const lobby = await createLobby(`Bot ${app.bot_token}`, { members: [{ id: players[0].id }] })
    const spellings = [`Bot ${app.bot_token}`, `bot ${app.bot_token}`, `BOT ${app.bot_token}`, `Bot  ${app.bot_token}`]
    // One window for the whole test: the clock stands still, so a slow machine cannot cross into the next one.
    const now = clock.now
    const frozen = now()
    clock.now = () => frozen
    try {
      forgetCallers()
      const statuses: number[] = []
      for (let i = 0; i <= MESSAGES.limit; i++)
        statuses.push(
          (await raw('POST', `/lobbies/${lobby.id}/messages`, { token: spellings[i % 4], body: { content: `m${i}` } }))
            .status,
        )
      expect(statuses).toEqual([...Array(MESSAGES.limit).fill(201), 429])
      expect(cachedCallers()).toBe(1)
      // GET /users/@me for the bot (a lane route) counts in one window too, whatever the spelling.
      const remaining = await Promise.all(
        spellings.map(async (token) =>
          (await raw('GET', '/users/@me', { token })).headers.get('x-ratelimit-remaining'),
        ),
      )
      expect(remaining.map(Number).sort((a, b) => b - a)).toEqual([49, 48, 47, 46])
      expect(cachedCallers()).toBe(1)
    } finally {
      clock.now = now
    }
  })

  test("a user's sessions are one caller; a wrong token counts by the client address", async () => {
    const user = await makeUser()
    const second = (await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })).body
      .token as string
    const now = clock.now
    const frozen = now()
    clock.now = () => frozen
    try {
      const left = async (token: string) =>
        Number((await raw('GET', '/users/@me', { token })).headers.get('x-ratelimit-remaining'))
      expect([await left(user.token), await left(second), await left(` ${user.token} `)]).toEqual([49, 48, 47])
      // Unknown tokens do not each get a window: they share the address's.
      const wrong = [await left('not-a-token'), await left('Bot not-a-token'), await left('bearer nope')]
      expect(wrong).toEqual([49, 48, 47])
    } finally {
      clock.now = now
    }
  })

  test('the limit and the identity check share one token lookup: none for a cached token, one for an unknown one', async () => {
    const user = await makeUser()
    let lookups = 0
    const originals = modules.flatMap((m) => (m.tokens ? [m.tokens] : []))
    for (const tokens of originals)
      setTokenResolvers(
        Object.fromEntries(
          Object.entries(tokens).map(([kind, resolve]) => [
            kind,
            (token: string) => {
              lookups += 1
              return (resolve as (t: string) => unknown)(token)
            },
          ]),
        ) as typeof tokens,
      )
    try {
      // A lane GET, an Elysia GET and an Elysia POST with a body.
      for (const [method, path] of [
        ['GET', '/users/@me'],
        ['GET', '/auth/sessions'],
        ['POST', '/lobbies'],
      ]) {
        await raw(method, path, { token: user.token, body: method === 'POST' ? {} : undefined })
        lookups = 0
        for (let i = 0; i < 5; i++)
          await raw(method, path, { token: user.token, body: method === 'POST' ? {} : undefined })
        expect({ path, lookups }).toEqual({ path, lookups: 0 })
        for (let i = 0; i < 5; i++)
          await raw(method, path, { token: `unknown-${i}`, body: method === 'POST' ? {} : undefined })
        expect({ path, lookups }).toEqual({ path, lookups: 5 })
      }
    } finally {
      for (const tokens of originals) setTokenResolvers(tokens)
    }
  })

  test(`every other route: ${DEFAULT_ROUTE_LIMIT.limit} per window; unauthenticated callers count by IP`, async () => {
    const user = await makeUser()
    const me = await untilLimited(() => raw('GET', '/users/@me', { token: user.token }))
    expect(me.window.map((r) => r.status)).toEqual(Array(DEFAULT_ROUTE_LIMIT.limit).fill(200))
    // Another route is another bucket.
    expect((await raw('GET', '/auth/sessions', { token: user.token })).status).toBe(200)
    await withConfig({ trustProxy: true }, async () => {
      const from = (ip: string) => raw('GET', '/auth/location-metadata', { headers: { 'x-forwarded-for': ip } })
      const ip = await untilLimited(() => from('198.51.100.20'))
      expect(ip.window.map((r) => r.status)).toEqual(Array(DEFAULT_ROUTE_LIMIT.limit).fill(200))
      expect((await from('198.51.100.21')).status).toBe(200)
    })
  })

  test('the limits that protect accounts still answer on their own: 10 wrong passwords, then their 429', async () => {
    const user = await makeUser()
    const login = () => raw('POST', '/auth/login', { body: { login: user.email, password: 'wrong password here' } })
    for (let i = 0; i < 10; i++) expect((await login()).status).toBe(400)
    const refused = await login()
    expect(refused.status).toBe(429)
    expect(refused.body.retry_after).toBeGreaterThan(60)
    expect(refused.headers.get('x-ratelimit-scope')).toBeNull()
    expect(refused.headers.get('x-ratelimit-bucket')).toMatch(/^[0-9a-f]{32}$/)
  })

  test('ROUTE_RATE_LIMITS=false keeps the headers and refuses nothing', async () => {
    const user = await makeUser()
    await withConfig({ routeRateLimits: false }, async () => {
      for (let i = 0; i < DEFAULT_ROUTE_LIMIT.limit + 5; i++) {
        const r = await raw('GET', '/users/@me', { token: user.token })
        expect(r.status).toBe(200)
        expect(r.headers.get('x-ratelimit-limit')).toBe(String(DEFAULT_ROUTE_LIMIT.limit))
      }
    })
  })
})

describe('@discordjs/rest', () => {
  test('a burst over the limits is paced by the library from our headers: no 429', async () => {
    const { url } = await server()
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const rest = new REST({ api: `${url}/api`, version: '10', retries: 0 }).setToken(bot.slice('Bot '.length))
    const statuses: number[] = []
    let paced = 0
    rest.on(RESTEvents.Response, (_request, response) => statuses.push(response.status))
    // Time stands still for the server and the library alike (both read Date.now()) and moves on only by each wait
    // the library announces, so the burst is a burst however slow the machine: in real time a loaded machine let
    // every window end before the library reached its limit, and nothing was paced. Its own global pacing (50
    // requests a second, from no header of ours) moves the time too but is not counted as pacing.
    setSystemTime(new Date())
    rest.on(RESTEvents.RateLimited, (limited) => {
      if (!limited.global) paced += 1
      setSystemTime(new Date(Date.now() + limited.timeToReset))
    })
    const messages = MESSAGES.limit * 2 + 3
    const reads = DEFAULT_ROUTE_LIMIT.limit + 10
    try {
      await Promise.all([
        ...Array.from({ length: messages }, (_, i) =>
          rest.post(`/lobbies/${lobby.id}/messages`, { body: { content: `burst ${i}` } }),
        ),
        ...Array.from({ length: reads }, () => rest.get(`/lobbies/${lobby.id}`)),
      ])
    } finally {
      setSystemTime()
    }
    expect(statuses).toHaveLength(messages + reads)
    expect(statuses.filter((s) => s === 429)).toEqual([])
    expect(paced).toBeGreaterThan(0)
    const history = await api('GET', `/lobbies/${lobby.id}/messages?limit=100`, { token: players[0].bearer })
    expect(history.body).toHaveLength(messages)
  }, 20_000)
})
