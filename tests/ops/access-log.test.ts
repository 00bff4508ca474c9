// The access log, captured in-process: the status actually sent (404, 204, handler Responses, errors, 413 refused
// before routing, 101 upgrades), route templates (never a path, query or fragment), client IP, request ids in and
// out, the JSON format; and a session through every token-bearing link whose log holds none of the tokens.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig, type Config } from '../../src/config'
import { captureLog } from '../../src/core/log'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'
import { lastLinkToken, registerUser, withConfig } from '../auth/helpers'
import { makeGuild } from '../guilds/helpers'
import { elevated } from '../mfa/helpers'
import { authorizeCode, REDIRECT, tokenRequest } from '../oauth2/helpers'

let lines: string[] = []
let before: Config

beforeAll(async () => {
  await server()
  before = config()
  setConfig({ ...before, logLevel: 'info' })
  captureLog((line) => void lines.push(line))
})
afterAll(() => {
  captureLog(undefined)
  setConfig({ ...config(), logLevel: before.logLevel, logFormat: before.logFormat })
})
afterEach(() => {
  resetWorld()
  lines = []
})

/** The log is written after the response: wait for the request lines to arrive. */
async function requestLines(count: number): Promise<string[]> {
  for (
    let i = 0;
    i < 100 && lines.filter((l) => l.includes(' request ') || l.includes('"msg":"request"')).length < count;
    i++
  )
    await Bun.sleep(5)
  return lines.filter((l) => l.includes(' request ') || l.includes('"msg":"request"'))
}

async function raw(path: string, init: RequestInit = {}) {
  const { url } = await server()
  return fetch(`${url}${path}`, { redirect: 'manual', ...init })
}

function field(line: string, name: string): string | undefined {
  return new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1]
}

describe('access log lines', () => {
  test('every line has a timestamp, a level, method, route template, the status sent, duration, IP and request id', async () => {
    const user = await makeUser()
    lines = []
    const r = await raw('/api/v9/users/@me', { headers: { authorization: user.token } })
    expect(r.status).toBe(200)
    const [line] = await requestLines(1)
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO request /)
    expect(field(line, 'method')).toBe('GET')
    expect(field(line, 'route')).toBe('/api/v9/users/@me')
    expect(field(line, 'status')).toBe('200')
    expect(Number(field(line, 'ms'))).toBeGreaterThanOrEqual(0)
    expect(field(line, 'ip')).toBe('127.0.0.1')
    expect(field(line, 'id')).toBe(r.headers.get('x-request-id')!)
    expect(line.endsWith('\n')).toBe(true)
    expect(line.trimEnd()).not.toContain('\n')
  })

  test('statuses are the ones sent: 404 unmatched, 204, a handler Response (302), 401, 400, 413 before routing', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const lobby = await api('POST', '/lobbies', { token: `Bot ${app.bot_token}`, body: {} })
    expect(lobby.status).toBe(201)
    await requestLines(1)
    lines = []
    const cases: [path: string, init: RequestInit, status: number, route: string][] = [
      ['/api/v9/nope', {}, 404, '<unmatched>'],
      [
        `/api/v9/lobbies/${lobby.body.id}`,
        { method: 'DELETE', headers: { authorization: `Bot ${app.bot_token}` } },
        204,
        '/api/v9/lobbies/:lobbyId',
      ],
      ['/', {}, 302, '/'],
      ['/api/v9/users/@me', {}, 401, '/api/v9/users/@me'],
      [
        '/api/v9/auth/login',
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"login":' },
        400,
        '/api/v9/auth/login',
      ],
      [
        '/api/v9/users/@me',
        {
          method: 'PATCH',
          headers: {
            authorization: user.token,
            'content-type': 'application/json',
            'content-length': String(2 * 1024 * 1024),
          },
          body: 'x'.repeat(2 * 1024 * 1024),
        },
        413,
        '<unmatched>',
      ],
    ]
    for (const [path, init, status] of cases) expect((await raw(path, init)).status, path).toBe(status)
    const logged = await requestLines(cases.length)
    expect(logged).toHaveLength(cases.length)
    // Lines are written when each response is done; match them by route and status, not by order.
    for (const [, init, status, route] of cases) {
      expect(
        logged.some(
          (l) =>
            field(l, 'route') === route &&
            field(l, 'status') === String(status) &&
            field(l, 'method') === (init.method ?? 'GET'),
        ),
        `${route} ${status}`,
      ).toBe(true)
    }
  })

  test('a Gateway upgrade logs 101 on the /gateway route', async () => {
    const { url } = await server()
    const ws = new WebSocket(`${url.replace('http', 'ws')}/gateway?v=10&encoding=json`)
    await new Promise((resolve) => (ws.onmessage = resolve))
    ws.close()
    const line = (await requestLines(1)).find((l) => field(l, 'route') === '/gateway')!
    expect(field(line, 'status')).toBe('101')
  })

  test('X-Request-Id: a plain one is kept and echoed; a malformed or oversized one is replaced; each request gets its own', async () => {
    const kept = await raw('/healthz', { headers: { 'x-request-id': 'nginx-7f3a9c.01' } })
    expect(kept.headers.get('x-request-id')).toBe('nginx-7f3a9c.01')
    for (const bad of ['has space', 'x'.repeat(129), 'quote"d', '']) {
      const r = await raw('/healthz', { headers: { 'x-request-id': bad } })
      expect(r.headers.get('x-request-id')).not.toBe(bad)
      expect(r.headers.get('x-request-id')).toMatch(/^[\w.-]+$/)
    }
    const a = (await raw('/healthz')).headers.get('x-request-id')
    const b = (await raw('/api/v9/nope')).headers.get('x-request-id')
    expect(a).not.toBe(b)
    const logged = await requestLines(7)
    expect(logged.some((l) => field(l, 'id') === 'nginx-7f3a9c.01')).toBe(true)
    expect(logged.some((l) => field(l, 'id') === b && field(l, 'status') === '404')).toBe(true)
    expect(lines.join('')).not.toContain('quote"d')
  })

  test('the client IP behind a proxy is the right-most untrusted X-Forwarded-For entry', async () => {
    await withConfig({ trustProxy: 1 }, async () => {
      await raw('/healthz', { headers: { 'x-forwarded-for': '81.2.69.160, 198.51.100.23' } })
      const [line] = await requestLines(1)
      expect(field(line, 'ip')).toBe('198.51.100.23')
    })
  })

  test('LOG_FORMAT=json: one JSON object per line with time, level, msg and the request fields', async () => {
    setConfig({ ...config(), logFormat: 'json' })
    try {
      const r = await raw('/api/v9/nope?token=abc')
      const [line] = await requestLines(1)
      expect(line.endsWith('\n')).toBe(true)
      const entry = JSON.parse(line)
      expect(entry).toEqual({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        level: 'info',
        msg: 'request',
        method: 'GET',
        route: '<unmatched>',
        status: 404,
        ms: expect.any(Number),
        ip: '127.0.0.1',
        request_id: r.headers.get('x-request-id'),
      })
    } finally {
      setConfig({ ...config(), logFormat: 'text' })
    }
  })
})

describe('no token reaches the log', () => {
  test('a session through every token-bearing link and endpoint logs none of the tokens', async () => {
    const secrets: string[] = []
    const keep = (value: string | undefined | null) => {
      expect(typeof value).toBe('string')
      secrets.push(value!)
      return value!
    }
    const PASSWORD = 'a brand new passphrase'

    // Registration and the e-mailed verification link (/verify#token=...: the page, then the API call it makes).
    const registered = await registerUser()
    keep(registered.r.body.token)
    const verify = keep(await lastLinkToken(registered.email, 'verify'))
    await raw('/verify')
    await raw(`/verify?token=${verify}`) // a mangled link puts it in the query
    expect((await api('POST', '/auth/verify', { body: { token: verify } })).status).toBe(200)

    // A login from a new place and its authorize-ip link.
    await withConfig({ newLoginLocationCheck: true, trustProxy: 1 }, async () => {
      const user = await makeUser()
      const from = (ip: string) =>
        api('POST', '/auth/login', {
          body: { login: user.email, password: user.password },
          headers: { 'x-forwarded-for': ip },
        })
      keep((await from('198.51.100.7')).body.token)
      expect((await from('203.0.113.9')).status).toBe(400)
      const authorize = keep(await lastLinkToken(user.email, 'authorize-ip'))
      await raw('/authorize-ip')
      expect((await api('POST', '/auth/authorize-ip', { body: { token: authorize } })).status).toBe(204)
    })

    // Password reset.
    const resetUser = await makeUser()
    keep(resetUser.token)
    expect((await api('POST', '/auth/forgot', { body: { login: resetUser.email } })).status).toBe(204)
    const reset = keep(await lastLinkToken(resetUser.email, 'reset'))
    await raw('/reset')
    keep((await api('POST', '/auth/reset', { body: { token: reset, password: PASSWORD } })).body.token)

    // E-mail change and the /wasntme/<token> revert link: the token is in the path.
    const changer = await makeUser()
    keep(changer.token)
    const { retry } = await elevated(
      'PATCH',
      '/users/@me',
      changer.token,
      { email: `moved${Date.now()}@example.test`, password: changer.password },
      'password',
      () => changer.password,
    )
    expect(retry.status).toBe(200)
    const revert = keep(await lastLinkToken(changer.email, 'wasntme'))
    expect((await raw(`/wasntme/${revert}`)).status).toBe(200)
    expect((await raw(`/wasntme/${revert}/`)).status).toBeGreaterThanOrEqual(200)
    expect((await api('POST', '/auth/revert', { body: { token: revert, password: PASSWORD } })).status).toBe(200)

    // OAuth2: the consent page with a state, the code, the tokens and a refresh.
    const oauthUser = await makeUser()
    const app = await makeApp([REDIRECT])
    keep(app.bot_token)
    keep(app.client_secret)
    const state = keep(`state${crypto.randomUUID().replace(/-/g, '')}`)
    await raw(
      `/oauth2/authorize?client_id=${app.id}&response_type=code&redirect_uri=${encodeURIComponent(REDIRECT)}&scope=identify&state=${state}`,
    )
    const code = keep(await authorizeCode(oauthUser, app, { state }))
    const tokens = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      [app.id, app.client_secret],
    )
    keep(tokens.body.access_token)
    keep(tokens.body.refresh_token)
    expect((await api('GET', '/users/@me', { token: `Bearer ${tokens.body.access_token}` })).status).toBe(200)
    const refreshed = await tokenRequest('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: app.id,
      client_secret: app.client_secret,
    })
    keep(refreshed.body.access_token)

    // An invite code in the path, and tokens in paths and queries no route matches.
    const { owner, channelId } = await makeGuild()
    const invite = await api('POST', `/channels/${channelId}/invites`, {
      token: owner.token,
      body: { max_age: 0, unique: true },
    })
    const inviteCode = keep(invite.body.code)
    expect((await api('GET', `/invites/${inviteCode}`)).status).toBe(200)
    await raw(`/api/v9/users/@me/${verify}?token=${reset}#${revert}`)
    await raw(`/${revert}`)
    await raw(`/assets/${revert}.js`)

    await Bun.sleep(50)
    const log = lines.join('')
    expect(lines.length).toBeGreaterThan(20)
    expect(log).toContain('route=/wasntme/*')
    expect(log).toContain('route=/api/v9/invites/:code')
    for (const secret of secrets) expect(log).not.toContain(secret)
  }, 30_000)
})
