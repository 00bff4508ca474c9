// CORS: only for WEB_URL's origin when it differs from BASE_URL's; preflights answered for it; no other origin, no
// credentials, nothing at all when the web client shares the API's origin.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig, type Config } from '../../src/config'
import { makeUser, server } from '../helpers'

const WEB = 'https://app.example.test'
let before: Config

beforeAll(async () => {
  await server()
  before = config()
})
afterAll(() => setConfig({ ...config(), webUrl: before.webUrl, baseUrl: before.baseUrl }))

async function call(path: string, init: RequestInit = {}) {
  const { url } = await server()
  return fetch(`${url}${path}`, init)
}

function preflight(origin: string, path = '/api/v9/users/@me') {
  return call(path, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'PATCH',
      'access-control-request-headers': 'authorization, content-type',
    },
  })
}

describe('web client on another origin', () => {
  beforeAll(() => setConfig({ ...config(), webUrl: `${WEB}/`.replace(/\/$/, ''), baseUrl: 'https://api.example.test' }))

  test('a preflight from WEB_URL is answered 204 with the methods and headers the client sends', async () => {
    const r = await preflight(WEB)
    expect(r.status).toBe(204)
    expect(r.headers.get('access-control-allow-origin')).toBe(WEB)
    expect(r.headers.get('access-control-allow-methods')).toContain('PATCH')
    const headers = r.headers
      .get('access-control-allow-headers')!
      .split(',')
      .map((h) => h.trim())
    expect(headers).toEqual(
      expect.arrayContaining(['authorization', 'content-type', 'x-discord-mfa-authorization', 'x-fingerprint']),
    )
    expect(Number(r.headers.get('access-control-max-age'))).toBeGreaterThan(0)
    expect(r.headers.get('access-control-allow-credentials')).toBeNull()
    expect(r.headers.get('vary')).toContain('Origin')
  })

  test('answers to WEB_URL carry its origin (errors too) and expose the rate-limit and request-id headers', async () => {
    const user = await makeUser()
    const ok = await call('/api/v9/users/@me', { headers: { origin: WEB, authorization: user.token } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(WEB)
    expect(ok.headers.get('access-control-expose-headers')).toContain('x-ratelimit-remaining')
    expect(ok.headers.get('access-control-expose-headers')).toContain('retry-after')
    expect(ok.headers.get('access-control-allow-credentials')).toBeNull()
    const denied = await call('/api/v9/users/@me', { headers: { origin: WEB } })
    expect(denied.status).toBe(401)
    expect(denied.headers.get('access-control-allow-origin')).toBe(WEB)
  })

  test('any other origin gets no CORS header, preflight or not', async () => {
    for (const origin of [
      'https://evil.example',
      'https://app.example.test.evil.example',
      'http://app.example.test',
      'null',
    ]) {
      const pre = await preflight(origin)
      expect(pre.headers.get('access-control-allow-origin')).toBeNull()
      expect(pre.headers.get('access-control-allow-methods')).toBeNull()
      const r = await call('/api/v9/users/@me', { headers: { origin } })
      expect(r.headers.get('access-control-allow-origin')).toBeNull()
    }
  })

  test('pages and other paths outside /api/ get no CORS header', async () => {
    const r = await call('/login', { headers: { origin: WEB } })
    expect(r.headers.get('access-control-allow-origin')).toBeNull()
  })
})

describe('web client on the API origin', () => {
  beforeAll(() => setConfig({ ...config(), webUrl: 'https://one.example.test', baseUrl: 'https://one.example.test' }))

  test('no CORS header for anybody', async () => {
    const pre = await preflight('https://one.example.test')
    expect(pre.headers.get('access-control-allow-origin')).toBeNull()
    const r = await call('/api/v9/users/@me', { headers: { origin: 'https://one.example.test' } })
    expect(r.headers.get('access-control-allow-origin')).toBeNull()
  })
})
