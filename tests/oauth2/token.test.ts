import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { REDIRECT, authorizeCode, grantTokens, pkce, tokenRequest } from './helpers'
import { rawSql } from '../db/raw'

afterEach(resetWorld)

const exchange = (app: { id: string; client_secret: string }, code: string, extra: Record<string, string> = {}) =>
  tokenRequest('/oauth2/token', { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...extra }, [
    app.id,
    app.client_secret,
  ])

describe('authorization_code', () => {
  test('a code buys a bearer token (Basic client auth) that identifies the user', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const code = await authorizeCode(user, app)
    const r = await exchange(app, code)
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('no-store')
    expect(r.body).toMatchObject({ token_type: 'Bearer', expires_in: 604800, scope: 'identify lobbies.write' })
    expect(r.body.access_token.length).toBeGreaterThanOrEqual(43)
    expect(r.body.refresh_token.length).toBeGreaterThanOrEqual(43)
    const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    expect(me.status).toBe(200)
    expect(me.body.id).toBe(user.id)
    // The consent screen now knows the user authorized the application.
    const q = new URLSearchParams({
      client_id: app.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'identify',
    })
    expect((await api('GET', `/oauth2/authorize?${q}`, { token: user.token })).body.authorized).toBe(true)
  })

  test('client credentials in the body work too; a wrong secret is 401 invalid_client', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const code = await authorizeCode(user, app)
    const wrong = await tokenRequest('/oauth2/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.id,
      client_secret: 'nope',
    })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error).toBe('invalid_client')
    const basicWrong = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      [app.id, 'nope'],
    )
    expect(basicWrong.status).toBe(401)
    expect(basicWrong.headers.get('www-authenticate')).toContain('Basic')
    const ok = await tokenRequest('/oauth2/token', {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      client_id: app.id,
      client_secret: app.client_secret,
    })
    expect(ok.status).toBe(200)
  })

  test('a code is single-use; a replay revokes what it bought', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const code = await authorizeCode(user, app)
    const first = await exchange(app, code)
    expect(first.status).toBe(200)
    const again = await exchange(app, code)
    expect(again.status).toBe(400)
    expect(again.body).toEqual({ error: 'invalid_grant', error_description: 'Invalid "code" in request.' })
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${first.body.access_token}` })).status).toBe(401)
  })

  test('20 parallel exchanges of one code: exactly one succeeds', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const code = await authorizeCode(user, app)
    const replies = await Promise.all(Array.from({ length: 20 }, () => exchange(app, code)))
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 400 && r.body.error === 'invalid_grant')).toHaveLength(19)
  })

  test('a code lives 10 minutes', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const fresh = await authorizeCode(user, app)
    const stale = await authorizeCode(user, app)
    clock.advance(10 * 60 * 1000 - 1000)
    expect((await exchange(app, fresh)).status).toBe(200)
    clock.advance(1000)
    const r = await exchange(app, stale)
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_grant')
  })

  test('the code belongs to its client and its redirect URI', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const other = await makeApp()
    const code = await authorizeCode(user, app)
    expect((await exchange(other, code)).body.error).toBe('invalid_grant')
    const code2 = await authorizeCode(user, app)
    const r = await exchange(app, code2, { redirect_uri: 'http://localhost/elsewhere' })
    expect(r.status).toBe(400)
    expect(r.body.error).toBe('invalid_grant')
  })

  test('PKCE S256 is checked; a public client may exchange with the verifier and no secret', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const { verifier, challenge } = pkce()
    const code = await authorizeCode(user, app, { code_challenge: challenge, code_challenge_method: 'S256' })
    const missing = await exchange(app, code)
    expect(missing.body.error).toBe('invalid_grant')

    const code2 = await authorizeCode(user, app, { code_challenge: challenge, code_challenge_method: 'S256' })
    const wrong = await exchange(app, code2, { code_verifier: pkce().verifier })
    expect(wrong.body.error).toBe('invalid_grant')

    const code3 = await authorizeCode(user, app, { code_challenge: challenge, code_challenge_method: 'S256' })
    const pub = await tokenRequest('/oauth2/token', {
      grant_type: 'authorization_code',
      code: code3,
      redirect_uri: REDIRECT,
      client_id: app.id,
      code_verifier: verifier,
    })
    expect(pub.status).toBe(200)

    // Without PKCE a secret is required.
    const code4 = await authorizeCode(user, app)
    const noSecret = await tokenRequest('/oauth2/token', {
      grant_type: 'authorization_code',
      code: code4,
      redirect_uri: REDIRECT,
      client_id: app.id,
    })
    expect(noSecret.status).toBe(401)
    expect(noSecret.body.error).toBe('invalid_client')
  })

  test('request errors use RFC 6749 names', async () => {
    const app = await makeApp()
    const none = await tokenRequest('/oauth2/token', {}, [app.id, app.client_secret])
    expect(none.status).toBe(400)
    expect(none.body.error).toBe('invalid_request')
    const odd = await tokenRequest('/oauth2/token', { grant_type: 'password' }, [app.id, app.client_secret])
    expect(odd.body.error).toBe('unsupported_grant_type')
    const noCode = await tokenRequest('/oauth2/token', { grant_type: 'authorization_code' }, [
      app.id,
      app.client_secret,
    ])
    expect(noCode.body).toEqual({ error: 'invalid_request', error_description: 'Missing "code" in request.' })
    const noClient = await tokenRequest('/oauth2/token', { grant_type: 'client_credentials' })
    expect(noClient.status).toBe(401)
    expect(noClient.body.error).toBe('invalid_client')
  })
})

describe('refresh_token', () => {
  test('rotates: new tokens, the old refresh token and access token stop working', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const first = await grantTokens(user, app)
    const r = await tokenRequest('/oauth2/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, [
      app.id,
      app.client_secret,
    ])
    expect(r.status).toBe(200)
    expect(r.body.refresh_token).not.toBe(first.refresh_token)
    expect(r.body.access_token).not.toBe(first.access_token)
    expect(r.body.scope).toBe('identify lobbies.write')
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${first.access_token}` })).status).toBe(401)
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${r.body.access_token}` })).status).toBe(200)
  })

  test('reusing a rotated refresh token revokes the whole family', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const first = await grantTokens(user, app)
    const second = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      [app.id, app.client_secret],
    )
    const third = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: second.body.refresh_token },
      [app.id, app.client_secret],
    )
    expect(third.status).toBe(200)
    const reuse = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      [app.id, app.client_secret],
    )
    expect(reuse.status).toBe(400)
    expect(reuse.body.error).toBe('invalid_grant')
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${third.body.access_token}` })).status).toBe(401)
    const latest = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: third.body.refresh_token },
      [app.id, app.client_secret],
    )
    expect(latest.body.error).toBe('invalid_grant')
  })

  test('parallel refreshes with one token: at most one wins, and the race revokes the family', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const first = await grantTokens(user, app)
    const replies = await Promise.all(
      Array.from({ length: 10 }, () =>
        tokenRequest('/oauth2/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, [
          app.id,
          app.client_secret,
        ]),
      ),
    )
    expect(replies.filter((r) => r.status === 200).length).toBeLessThanOrEqual(1)
    for (const r of replies.filter((r) => r.status === 200)) {
      expect((await api('GET', '/oauth2/@me', { token: `Bearer ${r.body.access_token}` })).status).toBe(401)
    }
  })

  test('another client cannot use it; narrowing the scope is allowed, widening is not', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const other = await makeApp()
    const first = await grantTokens(user, app, 'identify')
    const foreign = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      [other.id, other.client_secret],
    )
    expect(foreign.body.error).toBe('invalid_grant')
    const wider = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, scope: 'identify lobbies.write' },
      [app.id, app.client_secret],
    )
    expect(wider.body.error).toBe('invalid_scope')
    const noSecret = await tokenRequest('/oauth2/token', {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: app.id,
    })
    expect(noSecret.status).toBe(401)
  })
})

describe('client_credentials, revoke, @me', () => {
  test('client_credentials gives a token for the application without a refresh token', async () => {
    const app = await makeApp()
    const r = await tokenRequest('/oauth2/token', { grant_type: 'client_credentials', scope: 'identify' }, [
      app.id,
      app.client_secret,
    ])
    expect(r.status).toBe(200)
    expect(r.body.refresh_token).toBeUndefined()
    expect(r.body.scope).toBe('identify')
    const me = await api('GET', '/users/@me', { token: `Bearer ${r.body.access_token}` })
    expect(me.status).toBe(200)
    const bad = await tokenRequest('/oauth2/token', { grant_type: 'client_credentials', scope: 'identify bogus' }, [
      app.id,
      app.client_secret,
    ])
    expect(bad.status).toBe(400)
    expect(bad.body.error).toBe('invalid_scope')
  })

  test('revoking either token ends the grant; unknown tokens are fine', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const a = await grantTokens(user, app)
    const r = await tokenRequest('/oauth2/token/revoke', { token: a.access_token }, [app.id, app.client_secret])
    expect(r.status).toBe(200)
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${a.access_token}` })).status).toBe(401)
    const refresh = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: a.refresh_token },
      [app.id, app.client_secret],
    )
    expect(refresh.body.error).toBe('invalid_grant')

    const b = await grantTokens(user, app)
    const other = await makeApp()
    // Another client cannot revoke it.
    await tokenRequest('/oauth2/token/revoke', { token: b.refresh_token }, [other.id, other.client_secret])
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${b.access_token}` })).status).toBe(200)
    await tokenRequest('/oauth2/token/revoke', { token: b.refresh_token, token_type_hint: 'refresh_token' }, [
      app.id,
      app.client_secret,
    ])
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${b.access_token}` })).status).toBe(401)

    expect((await tokenRequest('/oauth2/token/revoke', { token: 'nothing' }, [app.id, app.client_secret])).status).toBe(
      200,
    )
    expect((await tokenRequest('/oauth2/token/revoke', { token: 'nothing' }, [app.id, 'wrong'])).status).toBe(401)
  })

  test('GET /oauth2/@me describes the grant; the user only with identify', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const t = await grantTokens(user, app)
    const r = await api('GET', '/oauth2/@me', { token: `Bearer ${t.access_token}` })
    expect(r.status).toBe(200)
    expect(r.body.application).toMatchObject({ id: app.id, name: app.name })
    expect(r.body.scopes).toEqual(['identify', 'lobbies.write'])
    expect(Date.parse(r.body.expires)).toBeGreaterThan(Date.now())
    expect(r.body.user.id).toBe(user.id)
    const narrow = await grantTokens(user, app, 'lobbies.write')
    const r2 = await api('GET', '/oauth2/@me', { token: `Bearer ${narrow.access_token}` })
    expect(r2.body.user).toBeUndefined()
    expect((await api('GET', '/oauth2/@me', { token: user.token })).status).toBe(401)
    expect((await api('GET', '/oauth2/@me', { token: `Bot ${app.bot_token}` })).status).toBe(401)
  })

  test('an access token expires after expires_in', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const t = await grantTokens(user, app)
    clock.advance(t.expires_in * 1000 - 1000)
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${t.access_token}` })).status).toBe(200)
    clock.advance(1000)
    expect((await api('GET', '/oauth2/@me', { token: `Bearer ${t.access_token}` })).status).toBe(401)
    const refreshed = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: t.refresh_token },
      [app.id, app.client_secret],
    )
    expect(refreshed.status).toBe(200)
  })

  test('codes and tokens are stored only as hashes', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const code = await authorizeCode(user, app)
    const t = (await exchange(app, code)).body
    const dump =
      JSON.stringify(await rawSql('SELECT * FROM oauth2_tokens')) +
      JSON.stringify(await rawSql('SELECT * FROM oauth2_codes'))
    expect(dump).not.toContain(code)
    expect(dump).not.toContain(t.access_token)
    expect(dump).not.toContain(t.refresh_token)
  })
})

describe('scopes', () => {
  test('sdk.social_layer carries lobbies.write; identify alone does not', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const social = await grantTokens(user, app, 'sdk.social_layer')
    const put = await api('PUT', '/lobbies', { token: `Bearer ${social.access_token}`, body: { secret: 'social' } })
    expect(put.status).toBe(200)
    const identify = await grantTokens(user, app, 'identify')
    expect(
      (await api('PUT', '/lobbies', { token: `Bearer ${identify.access_token}`, body: { secret: 'social' } })).status,
    ).toBe(403)
  })
})
