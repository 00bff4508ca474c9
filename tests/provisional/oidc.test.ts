// POST /partner-sdk/token (issue 44, part 2) against a real OIDC issuer (tests/provisional/issuer.ts: discovery and
// JWKS over HTTP, keys made with jose): the account of an ID token, its refresh token for confidential clients only,
// a key rotation, every error code of Discord's list provoked, algorithm confusion refused, oversize tokens refused,
// the JWKS down or slow answered 530009 within the time-out, and no token or secret in any log line.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { createPublicKey } from 'node:crypto'
import { SignJWT, UnsecuredJWT } from 'jose'
import { config, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { captureLog, setLogOptions } from '../../src/core/log'
import { addProvider } from '../../src/provisional/providers'
import { api, makeApp, resetWorld, server } from '../helpers'
import { tokenRequest } from '../oauth2/helpers'
import { rawSql } from '../db/raw'
import { TestIssuer } from './issuer'
import { botToken } from './helpers'

const TIMEOUT_MS = 600
let issuer: TestIssuer
const issuers: TestIssuer[] = []
beforeAll(async () => {
  await server()
  setConfig({ ...config(), externalAuthAllowPrivate: true, externalAuthTimeoutMs: TIMEOUT_MS })
  issuer = await fresh()
})
afterAll(() => {
  setConfig({ ...config(), externalAuthAllowPrivate: false, externalAuthTimeoutMs: 3000 })
  for (const i of issuers) i.stop()
})
afterEach(() => resetWorld())

async function fresh(path = '') {
  const i = await TestIssuer.start(path)
  issuers.push(i)
  return i
}

/** An application trusting `iss` for the audience 'game-client'. */
async function appWith(iss: TestIssuer | null = issuer, audience = 'game-client') {
  const app = await makeApp()
  if (iss) await addProvider({ applicationId: app.id, type: 'oidc', issuer: iss.issuer, audience })
  return app
}

function exchange(
  app: { id: string; client_secret?: string },
  token: string,
  type = 'OIDC',
  /** null: a public client, no secret sent. */
  secret: string | null = app.client_secret ?? null,
) {
  return api('POST', '/partner-sdk/token', {
    body: {
      client_id: app.id,
      ...(secret !== null ? { client_secret: secret } : {}),
      external_auth_type: type,
      external_auth_token: token,
    },
  })
}

const idToken = (
  claims: Record<string, unknown> = {},
  iss = issuer,
  key?: NonNullable<Parameters<TestIssuer['token']>[2]>['key'],
) => iss.token('game-client', claims, { key, now: clock.now() })

describe('an ID token for a provisional account', () => {
  test('confidential client: the account (preferred_username its name), a refresh token that keeps the hour', async () => {
    const app = await appWith()
    const r = await exchange(app, await idToken({ sub: 'alice', preferred_username: 'Alice' }))
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      access_token: expect.any(String),
      id_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.any(String),
      scope: 'sdk.social_layer',
    })
    const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    expect(me.body).toMatchObject({ global_name: 'Alice', public_flags: 1 << 23 })
    // The same subject again: the same account, its name unchanged.
    const again = await exchange(app, await idToken({ sub: 'alice', preferred_username: 'Other' }))
    const same = await api('GET', '/users/@me', { token: `Bearer ${again.body.access_token}` })
    expect(same.body.id).toBe(me.body.id)
    expect(same.body.global_name).toBe('Alice')
    // The refresh grant keeps the family's hour.
    const refreshed = await tokenRequest('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: r.body.refresh_token,
      client_id: app.id,
      client_secret: app.client_secret,
    })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body).toMatchObject({ expires_in: 3600, scope: 'sdk.social_layer' })
    const [row] = await rawSql(
      'SELECT expires_at - created_at AS lifetime FROM oauth2_tokens WHERE access_token_hash = ?',
      new Bun.CryptoHasher('sha256').update(refreshed.body.access_token).digest('hex'),
    )
    expect(row.lifetime).toBe(3600_000)
  })

  test('public client (no secret): a token, no refresh token; a name out of 1..32 is not taken', async () => {
    const app = await appWith()
    const r = await exchange(app, await idToken({ sub: 'bob', preferred_username: 'b'.repeat(33) }), 'OIDC', null)
    expect(r.status).toBe(200)
    expect(r.body.refresh_token).toBeUndefined()
    const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    expect(me.body.global_name).toBeNull()
  })

  test('DISCORD_BOT_ISSUED_ACCESS_TOKEN: a bot-issued token gives the same account; anything else 401', async () => {
    const app = await appWith(null)
    const first = await botToken(app.bot_token, 'game-42')
    const r = await exchange(app, first.body.access_token, 'DISCORD_BOT_ISSUED_ACCESS_TOKEN', null)
    expect(r.status).toBe(200)
    expect(r.body.refresh_token).toBeUndefined()
    const a = await api('GET', '/users/@me', { token: `Bearer ${first.body.access_token}` })
    const b = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    expect(b.body.id).toBe(a.body.id)
    const bad = await exchange(app, 'not-a-token', 'DISCORD_BOT_ISSUED_ACCESS_TOKEN')
    expect(bad.status).toBe(401)
    expect(bad.body.code).toBe(50014)
    clock.advance(3600_000)
    expect((await exchange(app, first.body.access_token, 'DISCORD_BOT_ISSUED_ACCESS_TOKEN')).status).toBe(401)
  })

  test('a key rotation: a token of the new key is taken once the JWKS has it (fetched again at most every 30 s)', async () => {
    const rotating = await fresh('/tenant')
    const app = await appWith(rotating)
    expect((await exchange(app, await idToken({ sub: 'r' }, rotating))).status).toBe(200)
    const fetched = rotating.jwksFetches
    const next = await rotating.addKey('ES256')
    rotating.published = [next.kid]
    // Within the cool-down the new kid is not looked for: 530020, and the JWKS is not fetched.
    const early = await exchange(app, await idToken({ sub: 'r' }, rotating, next))
    expect(early.body.code).toBe(530020)
    expect(rotating.jwksFetches).toBe(fetched)
    clock.advance(31_000)
    const later = await exchange(app, await idToken({ sub: 'r' }, rotating, next))
    expect(later.status).toBe(200)
    expect(rotating.jwksFetches).toBe(fetched + 1)
    // The old key is gone from the set: its tokens fail now.
    clock.advance(31_000)
    expect((await exchange(app, await idToken({ sub: 'r' }, rotating))).body.code).toBe(530020)
    const eddsa = await rotating.addKey('EdDSA')
    rotating.published = undefined
    clock.advance(31_000)
    expect((await exchange(app, await idToken({ sub: 'r' }, rotating, eddsa))).status).toBe(200)
  })
})

describe("Discord's error codes", () => {
  const code = async (r: Promise<{ status: number; body: any }>) => {
    const { status, body } = await r
    return [status, body.code]
  }

  test('530001 expired, 530004 issued over a week ago, 530002 issuer, 530003 audience', async () => {
    const app = await appWith()
    const now = Math.floor(clock.now() / 1000)
    expect(await code(exchange(app, await idToken({ iat: now - 7200, exp: now - 3600 })))).toEqual([400, 530001])
    const weekOld = now - 7 * 24 * 3600
    expect(await code(exchange(app, await idToken({ iat: weekOld - 1, exp: now + 60 })))).toEqual([400, 530004])
    // A week to the second is still taken.
    expect(await code(exchange(app, await idToken({ iat: weekOld + 1, exp: now + 60 })))).toEqual([200, undefined])
    const other = await fresh()
    expect(await code(exchange(app, await idToken({}, other)))).toEqual([400, 530002])
    expect(await code(exchange(app, await issuer.token('another-client', {}, { now: clock.now() })))).toEqual([
      400, 530003,
    ])
  })

  test('530000 not configured: no provider, or a vendor type; 530007 a wrong secret; an unknown application 404', async () => {
    const bare = await appWith(null)
    expect(await code(exchange(bare, await idToken()))).toEqual([400, 530000])
    const app = await appWith()
    for (const type of [
      'STEAM_SESSION_TICKET',
      'EPIC_ONLINE_SERVICES_ACCESS_TOKEN',
      'EPIC_ONLINE_SERVICES_ID_TOKEN',
      'UNITY_SERVICES_ID_TOKEN',
    ]) {
      const r = await exchange(app, 'vendor-ticket', type)
      expect([r.status, r.body.code]).toEqual([400, 530000])
      expect(r.body.message).toContain('need')
    }
    expect(await code(exchange(app, await idToken(), 'OIDC', 'wrong secret'))).toEqual([401, 530007])
    expect(await code(exchange({ id: '1234567890123456789' }, await idToken()))).toEqual([404, 10002])
    const unknownType = await exchange(app, 'x', 'PASSWORD')
    expect([unknownType.status, unknownType.body.code]).toEqual([400, 50035])
  })

  test('530008 no discovery document (missing, or naming another issuer)', async () => {
    const missing = await fresh()
    missing.discovery = 'missing'
    expect(await code(exchange(await appWith(missing), await idToken({}, missing)))).toEqual([400, 530008])
    const wrong = await fresh()
    wrong.discovery = 'wrong-issuer'
    expect(await code(exchange(await appWith(wrong), await idToken({}, wrong)))).toEqual([400, 530008])
    const closed = await fresh()
    const app = await appWith(closed)
    const token = await idToken({}, closed)
    closed.stop()
    expect(await code(exchange(app, token))).toEqual([400, 530008])
  })

  test('the SSRF guard: an issuer on a private address is not fetched unless EXTERNAL_AUTH_ALLOW_PRIVATE (530008)', async () => {
    const local = await fresh()
    const app = await appWith(local)
    setConfig({ ...config(), externalAuthAllowPrivate: false })
    try {
      expect(await code(exchange(app, await idToken({}, local)))).toEqual([400, 530008])
      expect(local.jwksFetches).toBe(0)
    } finally {
      setConfig({ ...config(), externalAuthAllowPrivate: true })
    }
    expect(await code(exchange(app, await idToken({}, local)))).toEqual([200, undefined])
  })

  test('530009: the JWKS down, answering garbage, or slower than the time-out (answered within it)', async () => {
    const down = await fresh()
    down.jwks = 'down'
    expect(await code(exchange(await appWith(down), await idToken({}, down)))).toEqual([400, 530009])
    const garbage = await fresh()
    garbage.jwks = 'garbage'
    expect(await code(exchange(await appWith(garbage), await idToken({}, garbage)))).toEqual([400, 530009])
    const slow = await fresh()
    slow.jwks = 'slow'
    const app = await appWith(slow)
    const token = await idToken({}, slow)
    const started = performance.now()
    expect(await code(exchange(app, token))).toEqual([400, 530009])
    const took = performance.now() - started
    expect(took).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    expect(took).toBeLessThan(TIMEOUT_MS + 1000)
    // Back up: the next exchange fetches and succeeds.
    slow.jwks = 'ok'
    expect(await code(exchange(app, token))).toEqual([200, undefined])
    // Down again with keys held, and a token naming a key the set lacks: 530009, not "bad token".
    slow.jwks = 'down'
    const unknown = await slow.addKey('RS256')
    clock.advance(31_000)
    expect(await code(exchange(app, await idToken({}, slow, unknown)))).toEqual([400, 530009])
    // The key held still verifies its tokens meanwhile.
    expect(await code(exchange(app, await idToken({}, slow)))).toEqual([200, undefined])
  })

  test('530020: a bad signature, alg none, HS256 keyed with the public key, no sub, garbage', async () => {
    const app = await appWith()
    const good = await idToken({ sub: 's' })
    const [h, p, s] = good.split('.')
    const flipped = `${h}.${p}.${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`
    expect(await code(exchange(app, flipped))).toEqual([400, 530020])
    const now = Math.floor(clock.now() / 1000)
    const claims = { sub: 's', iss: issuer.issuer, aud: 'game-client', iat: now, exp: now + 600 }
    const none = new UnsecuredJWT(claims).encode()
    expect(await code(exchange(app, none))).toEqual([400, 530020])
    // The classic confusion: the issuer's public key (PEM and JWK forms) used as an HMAC secret.
    const pem = createPublicKey({ key: issuer.keys[0].jwk as never, format: 'jwk' }).export({
      type: 'spki',
      format: 'pem',
    })
    for (const secret of [Buffer.from(pem), Buffer.from(JSON.stringify(issuer.keys[0].jwk))]) {
      const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: issuer.keys[0].kid }).sign(secret)
      expect(await code(exchange(app, hs))).toEqual([400, 530020])
    }
    const noSub = await issuer.token('game-client', { sub: undefined }, { now: clock.now() })
    expect(await code(exchange(app, noSub))).toEqual([400, 530020])
    for (const junk of ['x', 'a.b.c', `${h}.${p}`, '...'])
      expect(await code(exchange(app, junk))).toEqual([400, 530020])
  })

  test('a token over 8 KB is refused 400 before any work; 8 KB exactly is read', async () => {
    const app = await appWith()
    const big = await exchange(app, 'x'.repeat(8193))
    expect(big.status).toBe(400)
    expect(big.body.code).toBe(50035)
    expect(big.body.errors.external_auth_token._errors[0].code).toBe('BASE_TYPE_BAD_LENGTH')
    expect(await code(exchange(app, 'x'.repeat(8192)))).toEqual([400, 530020])
  })
})

test('no log line carries a token, an ID token or a client secret', async () => {
  const lines: string[] = []
  setLogOptions('debug', 'text')
  captureLog((line) => void lines.push(line))
  try {
    const app = await appWith()
    const token = await idToken({ sub: 'logged' })
    const ok = await exchange(app, token)
    await exchange(app, token, 'OIDC', 'a wrong secret value')
    const down = await fresh()
    down.jwks = 'down'
    await exchange(await appWith(down), await idToken({}, down))
    const bot = await botToken(app.bot_token, 'logged-player')
    await Bun.sleep(50)
    const all = lines.join('')
    expect(lines.length).toBeGreaterThan(0)
    for (const secret of [
      token,
      token.split('.')[2],
      ok.body.access_token,
      ok.body.refresh_token,
      app.client_secret,
      'a wrong secret value',
      app.bot_token,
      bot.body.access_token,
    ])
      expect(all).not.toContain(secret)
  } finally {
    captureLog(undefined)
    setLogOptions('silent', 'text')
  }
})
