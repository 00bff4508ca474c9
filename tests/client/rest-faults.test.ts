// suite: one pass
// The SDK's REST client against a fake server that answers what a real one rarely does on cue: 429s (per route,
// global, past the cap), buckets that run dry, bodies that are not JSON, no server at all, no answer in time, and the
// MFA elevation (60003) answered through the app's handler once. Every failure is an ApiError or a ConnectionError.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { ApiError, Client, ConnectionError } from '../../client/src/index'
import { freePort } from '../ops/process-helpers'

type Seen = { method: string; path: string; headers: Headers; at: number; body: string }
let seen: Seen[] = []
let answer: (req: Request, n: number) => Response | Promise<Response> = () => Response.json({})
beforeEach(() => {
  seen = []
})

const fake = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    const url = new URL(req.url)
    seen.push({
      method: req.method,
      path: url.pathname + url.search,
      headers: req.headers,
      at: Date.now(),
      body: await req.text(),
    })
    return answer(req, seen.length)
  },
})
afterAll(() => fake.stop(true))
const baseUrl = `http://127.0.0.1:${fake.port}`
const client = (options: ConstructorParameters<typeof Client>[0] = {}) => new Client({ baseUrl, ...options })

const tooMany = (retryAfter: number, headers: Record<string, string> = {}, global = false) =>
  Response.json(
    { message: 'You are being rate limited.', retry_after: retryAfter, global, code: 0 },
    { status: 429, headers: { 'retry-after': String(Math.ceil(retryAfter)), ...headers } },
  )

describe('requests', () => {
  test('the base URL and /api/v10, JSON both ways, the token as Discord sends it (bare, Bot, Bearer)', async () => {
    answer = () => Response.json({ ok: true })
    const c = client({ token: 'user-token' })
    expect(await c.rest.request('POST', '/lobbies', { body: { secret: 's' }, query: { a: 1, b: undefined } })).toEqual({
      ok: true,
    })
    c.setToken('bot-token', 'Bot')
    await c.rest.request('GET', '/users/@me')
    c.setToken('Bearer oauth-token')
    await c.rest.request('GET', '/users/@me', { headers: { 'x-service-mfa-authorization': 'jwt' } })
    await c.rest.request('GET', '/users/@me', { auth: false })
    expect(seen.map((s) => s.path)).toEqual([
      '/api/v10/lobbies?a=1',
      '/api/v10/users/@me',
      '/api/v10/users/@me',
      '/api/v10/users/@me',
    ])
    expect(seen.map((s) => s.headers.get('authorization'))).toEqual([
      'user-token',
      'Bot bot-token',
      'Bearer oauth-token',
      null,
    ])
    expect(seen[0].headers.get('content-type')).toBe('application/json')
    expect(JSON.parse(seen[0].body)).toEqual({ secret: 's' })
    expect(seen[2].headers.get('x-service-mfa-authorization')).toBe('jwt')
    expect(c.tokenKind).toBe('Bearer')
  })

  test('204 resolves with undefined', async () => {
    answer = () => new Response(null, { status: 204 })
    expect(await client().rest.request('DELETE', '/lobbies/1/members/@me')).toBeUndefined()
  })

  test("an error body is one ApiError: status, Discord's code, message, the field errors tree", async () => {
    answer = () =>
      Response.json(
        {
          code: 50035,
          message: 'Invalid Form Body',
          errors: {
            secret: { _errors: [{ code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }] },
            members: { 0: { id: { _errors: [{ code: 'X', message: 'bad id' }] } } },
          },
        },
        { status: 400 },
      )
    const error = await client()
      .rest.request('PUT', '/lobbies', { body: {} })
      .catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({
      status: 400,
      code: 50035,
      message: 'Invalid Form Body',
      method: 'PUT',
      path: '/lobbies',
    })
    expect(error.errors.secret._errors[0].code).toBe('BASE_TYPE_REQUIRED')
    expect(error.fieldErrors()).toEqual({ secret: ['This field is required'], 'members.0.id': ['bad id'] })
  })

  test('an answer that is not JSON is an ApiError, 2xx or not', async () => {
    answer = (_req, n) =>
      n === 1 ? new Response('<html>proxy</html>', { status: 200 }) : new Response('Bad Gateway', { status: 502 })
    const c = client({ retries: 0 })
    const ok = await c.rest.request('GET', '/users/@me').catch((e) => e)
    expect(ok).toBeInstanceOf(ApiError)
    expect(ok).toMatchObject({ status: 200, code: 0 })
    const bad = await c.rest.request('GET', '/users/@me').catch((e) => e)
    expect(bad).toBeInstanceOf(ApiError)
    expect(bad).toMatchObject({ status: 502, code: 0, body: undefined })
  })

  test('no server is a ConnectionError; so is no answer in time', async () => {
    const nobody = new Client({ baseUrl: `http://127.0.0.1:${freePort()}` })
    const refused = await nobody.rest.request('GET', '/users/@me').catch((e) => e)
    expect(refused).toBeInstanceOf(ConnectionError)
    answer = () => new Promise((resolve) => setTimeout(() => resolve(Response.json({})), 2000))
    const slow = await client({ timeout: 100 })
      .rest.request('GET', '/users/@me')
      .catch((e) => e)
    expect(slow).toBeInstanceOf(ConnectionError)
    expect(slow.message).toContain('no answer within 100 ms')
  })
})

describe('rate limits', () => {
  test('a 429 is waited out by its retry_after, then the call goes through', async () => {
    answer = (_req, n) => (n === 1 ? tooMany(0.3, { 'x-ratelimit-scope': 'user' }) : Response.json({ id: '1' }))
    const started = Date.now()
    expect(await client().rest.request('POST', '/lobbies/1/messages', { body: { content: 'x' } })).toEqual({ id: '1' })
    expect(seen.length).toBe(2)
    expect(seen[1].at - seen[0].at).toBeGreaterThanOrEqual(290)
    expect(Date.now() - started).toBeLessThan(2000)
  })

  test('a 429 past maxRetryAfter throws at once, with retryAfter', async () => {
    answer = () => tooMany(30)
    const started = Date.now()
    const error = await client({ maxRetryAfter: 5 })
      .rest.request('POST', '/auth/login', { body: {} })
      .catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 429, retryAfter: 30 })
    expect(seen.length).toBe(1)
    expect(Date.now() - started).toBeLessThan(1000)
  })

  test('retries are capped: a server that keeps answering 429 ends in the 429', async () => {
    answer = () => tooMany(0.01)
    const error = await client({ retries: 2 })
      .rest.request('GET', '/users/@me')
      .catch((e) => e)
    expect(error).toMatchObject({ status: 429 })
    expect(seen.length).toBe(3)
  })

  test('Retry-After alone (no JSON body) is read too', async () => {
    answer = (_req, n) =>
      n === 1
        ? new Response('slow down', { status: 429, headers: { 'retry-after': '0', 'x-ratelimit-reset-after': '0.2' } })
        : Response.json({})
    await client().rest.request('GET', '/users/@me')
    expect(seen.length).toBe(2)
  })

  test('a bucket that ran dry makes the next call of its route wait for its reset, and only that route', async () => {
    answer = (req) => {
      const path = new URL(req.url).pathname
      const headers = {
        'x-ratelimit-bucket': path.includes('messages') ? 'msgs' : 'me',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset-after': '0.4',
        'x-ratelimit-limit': '1',
      }
      return Response.json({}, { headers })
    }
    const c = client()
    await c.rest.request('POST', '/lobbies/1/messages', { body: { content: 'a' } })
    const other = c.rest.request('GET', '/users/@me')
    const otherLobby = c.rest.request('POST', '/lobbies/2/messages', { body: { content: 'c' } })
    await c.rest.request('POST', '/lobbies/1/messages', { body: { content: 'b' } })
    await Promise.all([other, otherLobby])
    const [first, me, lobby2, second] = [
      seen[0],
      seen.find((s) => s.path.endsWith('@me'))!,
      seen.find((s) => s.path.includes('/2/'))!,
      seen.filter((s) => s.path.includes('/1/'))[1],
    ]
    expect(second.at - first.at).toBeGreaterThanOrEqual(380)
    // Another route, and the same route of another lobby (its major parameter), did not wait.
    expect(me.at - first.at).toBeLessThan(300)
    expect(lobby2.at - first.at).toBeLessThan(300)
  })

  test('a global 429 holds every route', async () => {
    answer = (req, n) => (n === 1 ? tooMany(0.4, { 'x-ratelimit-global': 'true' }, true) : Response.json({}))
    const c = client()
    const first = c.rest.request('GET', '/users/@me')
    await Bun.sleep(50)
    await c.rest.request('GET', '/experiments')
    await first
    const experiments = seen.find((s) => s.path.endsWith('experiments'))!
    expect(experiments.at - seen[0].at).toBeGreaterThanOrEqual(300)
  })
})

describe('MFA elevation (60003)', () => {
  const elevation = () =>
    Response.json(
      {
        code: 60003,
        message: 'Two factor is required for this operation',
        mfa: { ticket: 't1', methods: [{ type: 'totp', backup_codes_allowed: true }] },
      },
      { status: 401 },
    )

  test("asks the app's handler once, then repeats the call with X-Service-MFA-Authorization", async () => {
    answer = (req) =>
      req.headers.get('x-service-mfa-authorization') === 'the-jwt' ? Response.json({ done: true }) : elevation()
    const asked: unknown[] = []
    const c = client({ onMfaRequired: (mfa) => (asked.push(mfa), 'the-jwt') })
    expect(await c.rest.request('POST', '/users/@me/mfa/totp/disable')).toEqual({ done: true })
    expect(asked).toEqual([{ ticket: 't1', methods: [{ type: 'totp', backup_codes_allowed: true }] }])
    expect(seen.length).toBe(2)
  })

  test('a handler that gives up, or a second 60003, throws the 60003 (no loop)', async () => {
    answer = () => elevation()
    let asked = 0
    const giveUp = client({ onMfaRequired: () => (asked++, undefined) })
    expect(await giveUp.rest.request('POST', '/x').catch((e) => e)).toMatchObject({
      status: 401,
      code: 60003,
      mfa: { ticket: 't1' },
    })
    const wrong = client({ onMfaRequired: () => (asked++, 'stale') })
    expect(await wrong.rest.request('POST', '/x').catch((e) => e)).toMatchObject({ code: 60003 })
    expect(asked).toBe(2)
    expect(seen.length).toBe(3)
  })
})
