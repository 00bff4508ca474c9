import { afterEach, describe, expect, test } from 'bun:test'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { REDIRECT, authorizeQuery, pkce } from './helpers'

afterEach(resetWorld)

describe('GET /oauth2/authorize', () => {
  test('shows the application, scopes, redirect URI and user', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const r = await api('GET', `/oauth2/authorize?${authorizeQuery(app)}`, { token: user.token })
    expect(r.status).toBe(200)
    expect(r.body.application).toMatchObject({ id: app.id, name: app.name })
    expect(r.body.scopes).toEqual(['identify', 'lobbies.write'])
    expect(r.body.redirect_uri).toBe(REDIRECT)
    expect(r.body.user.id).toBe(user.id)
    expect(r.body.authorized).toBe(false)
  })

  test('needs a user token: none 401, bot 403 20001', async () => {
    const app = await makeApp()
    expect((await api('GET', `/oauth2/authorize?${authorizeQuery(app)}`)).status).toBe(401)
    const bot = await api('GET', `/oauth2/authorize?${authorizeQuery(app)}`, { token: `Bot ${app.bot_token}` })
    expect(bot.status).toBe(403)
    expect(bot.body.code).toBe(20001)
  })

  test('refuses unknown clients, unregistered redirect URIs, other response types and unknown scopes', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const get = (extra: Record<string, string>) =>
      api('GET', `/oauth2/authorize?${authorizeQuery(app, extra)}`, { token: user.token })

    const unknown = await get({ client_id: '1234567890123' })
    expect(unknown.status).toBe(404)
    expect(unknown.body.code).toBe(10002)
    const notId = await get({ client_id: 'abc' })
    expect(notId.status).toBe(400)
    expect(notId.body.errors.client_id).toBeDefined()

    for (const uri of [`${REDIRECT}/x`, `${REDIRECT}?a=1`, 'http://localhost/callbacK', 'http://evil.test/callback']) {
      const r = await get({ redirect_uri: uri })
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
      expect(r.body.errors.redirect_uri._errors[0].message).toBe('Invalid OAuth2 redirect_uri')
    }

    const token = await get({ response_type: 'token' })
    expect(token.status).toBe(400)
    expect(token.body.errors.response_type).toBeDefined()

    const scope = await get({ scope: 'identify openid' })
    expect(scope.status).toBe(400)
    expect(scope.body.error).toBe('invalid_scope')
    expect(scope.body.errors.scope).toBeDefined()
    expect((await get({ scope: '' })).status).toBe(400)
  })

  test('redirect_uri may be left out only when exactly one is registered', async () => {
    const user = await makeUser()
    const one = await makeApp()
    const q = new URLSearchParams({ client_id: one.id, response_type: 'code', scope: 'identify' })
    const r = await api('GET', `/oauth2/authorize?${q}`, { token: user.token })
    expect(r.status).toBe(200)
    expect(r.body.redirect_uri).toBe(REDIRECT)
    const two = await makeApp([REDIRECT, 'http://localhost/other'])
    const r2 = await api(
      'GET',
      `/oauth2/authorize?${new URLSearchParams({ client_id: two.id, response_type: 'code', scope: 'identify' })}`,
      { token: user.token },
    )
    expect(r2.status).toBe(400)
    expect(r2.body.errors.redirect_uri._errors[0].code).toBe('BASE_TYPE_REQUIRED')
  })

  test('PKCE: S256 only, challenge well formed', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const { challenge } = pkce()
    const get = (extra: Record<string, string>) =>
      api('GET', `/oauth2/authorize?${authorizeQuery(app, extra)}`, { token: user.token })
    expect((await get({ code_challenge: challenge, code_challenge_method: 'S256' })).status).toBe(200)
    const plain = await get({ code_challenge: challenge, code_challenge_method: 'plain' })
    expect(plain.status).toBe(400)
    expect(plain.body.errors.code_challenge_method).toBeDefined()
    expect((await get({ code_challenge: challenge })).status).toBe(400)
    expect((await get({ code_challenge: 'short', code_challenge_method: 'S256' })).status).toBe(400)
    expect((await get({ code_challenge_method: 'S256' })).status).toBe(400)
  })
})

describe('POST /oauth2/authorize', () => {
  test('authorize: true redirects with a code and the state', async () => {
    const user = await makeUser()
    const app = await makeApp(['http://localhost/callback?keep=1'])
    const r = await api(
      'POST',
      `/oauth2/authorize?${authorizeQuery(app, { redirect_uri: 'http://localhost/callback?keep=1' })}`,
      {
        token: user.token,
        body: { authorize: true },
      },
    )
    expect(r.status).toBe(200)
    const location = new URL(r.body.location)
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('keep')).toBe('1')
    expect(location.searchParams.get('state')).toBe('xyz')
    expect(location.searchParams.get('code')!.length).toBeGreaterThanOrEqual(43)
  })

  test('authorize: false redirects with error=access_denied and no code', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const r = await api('POST', `/oauth2/authorize?${authorizeQuery(app)}`, {
      token: user.token,
      body: { authorize: false },
    })
    expect(r.status).toBe(200)
    const location = new URL(r.body.location)
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('state')).toBe('xyz')
    expect(location.searchParams.get('code')).toBeNull()
  })

  test('checks the request like GET, and needs the authorize field', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const bad = await api('POST', `/oauth2/authorize?${authorizeQuery(app, { redirect_uri: 'http://evil.test/' })}`, {
      token: user.token,
      body: { authorize: true },
    })
    expect(bad.status).toBe(400)
    expect(JSON.stringify(bad.body)).not.toContain('evil.test')
    const missing = await api('POST', `/oauth2/authorize?${authorizeQuery(app)}`, { token: user.token, body: {} })
    expect(missing.status).toBe(400)
    expect(missing.body.errors.authorize).toBeDefined()
    const bot = await api('POST', `/oauth2/authorize?${authorizeQuery(app)}`, {
      token: `Bot ${app.bot_token}`,
      body: { authorize: true },
    })
    expect(bot.status).toBe(403)
  })
})
