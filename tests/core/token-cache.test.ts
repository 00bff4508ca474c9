// Tokens resolve through an in-memory cache (core/caller.ts). Each test first uses a token a few times (so its answer
// is cached), then ends it by one of the paths a client can take, and expects the very next request to fail.
import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { GatewayClient } from '../gateway-client'
import { elevated } from '../mfa/helpers'
import { grantTokens, tokenRequest } from '../oauth2/helpers'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { foreignWrite } from '../db/raw'

afterEach(resetWorld)

const me = (token: string) => api('GET', '/users/@me', { token })

async function warm(token: string): Promise<void> {
  for (let i = 0; i < 3; i++) expect((await me(token)).status).toBe(200)
}

async function login(user: { email: string; password: string }): Promise<string> {
  const r = await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
  expect(r.status).toBe(200)
  return r.body.token
}

describe('user tokens', () => {
  test('logout: the next request with the token is 401', async () => {
    const user = await makeUser()
    await warm(user.token)
    expect((await api('POST', '/auth/logout', { token: user.token })).status).toBe(204)
    expect((await me(user.token)).status).toBe(401)
  })

  test('a session ended from another session (POST /auth/sessions/logout) fails at once', async () => {
    const user = await makeUser()
    const other = await login(user)
    await warm(other)
    const { client, ready } = await GatewayClient.identified(other)
    client.close()
    const body = { session_id_hashes: [ready.auth_session_id_hash] }
    const { retry } = await elevated('POST', '/auth/sessions/logout', user.token, body, 'password', () => user.password)
    expect(retry.status).toBe(204)
    expect((await me(other)).status).toBe(401)
  })

  test('a password change ends the other sessions at once', async () => {
    const user = await makeUser()
    const other = await login(user)
    await warm(other)
    const body = { password: user.password, new_password: 'another long enough password 42' }
    const r = await api('PATCH', '/users/@me', { token: user.token, body })
    expect(r.status).toBe(200)
    expect((await me(other)).status).toBe(401)
  })

  test('disabling the account: its tokens fail on the next request', async () => {
    const user = await makeUser()
    const other = await login(user)
    await warm(user.token)
    await warm(other)
    expect(
      (await api('POST', '/users/@me/disable', { token: user.token, body: { password: user.password } })).status,
    ).toBe(204)
    expect((await me(user.token)).status).toBe(401)
    expect((await me(other)).status).toBe(401)
  })

  test('a session idle past SESSION_IDLE_DAYS fails even though it was just cached', async () => {
    const user = await makeUser()
    await warm(user.token)
    clock.advance(91 * 24 * 3600_000)
    expect((await me(user.token)).status).toBe(401)
  })

  test('a cached session is still touched: approx_last_used_time moves after a minute', async () => {
    const user = await makeUser()
    await warm(user.token)
    const before = (await api('GET', '/auth/sessions', { token: user.token })).body.user_sessions
    clock.advance(10 * 60_000)
    await warm(user.token)
    const after = (await api('GET', '/auth/sessions', { token: user.token })).body.user_sessions
    const newest = (list: { approx_last_used_time: string }[]) =>
      Math.max(...list.map((s) => Date.parse(s.approx_last_used_time)))
    expect(newest(after)).toBeGreaterThan(newest(before))
  })

  test('other users are not affected by one user ending a session', async () => {
    const a = await makeUser()
    const b = await makeUser()
    await warm(a.token)
    await warm(b.token)
    expect((await api('POST', '/auth/logout', { token: a.token })).status).toBe(204)
    expect((await me(a.token)).status).toBe(401)
    expect((await me(b.token)).status).toBe(200)
  })
})

describe('another process', () => {
  test("its commit ending a user's sessions fails their cached tokens within milliseconds", async () => {
    const user = await makeUser()
    await warm(user.token)
    // A second connection to the server's database stands for the CLI.
    await foreignWrite('DELETE FROM auth_sessions WHERE user_id = ?', user.id)
    expect((await me(user.token)).status).toBe(401)
  })
})

describe('OAuth2 access tokens', () => {
  const oauthMe = (token: string) => api('GET', '/oauth2/@me', { token: `Bearer ${token}` })

  test('refreshing ends the old access token at once', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const first = await grantTokens(user, app)
    for (let i = 0; i < 3; i++) expect((await oauthMe(first.access_token)).status).toBe(200)
    const r = await tokenRequest('/oauth2/token', { grant_type: 'refresh_token', refresh_token: first.refresh_token }, [
      app.id,
      app.client_secret,
    ])
    expect(r.status).toBe(200)
    expect((await oauthMe(first.access_token)).status).toBe(401)
    expect((await oauthMe(r.body.access_token)).status).toBe(200)
  })

  test('revocation ends the access token at once', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const grant = await grantTokens(user, app)
    for (let i = 0; i < 3; i++) expect((await oauthMe(grant.access_token)).status).toBe(200)
    const r = await tokenRequest('/oauth2/token/revoke', { token: grant.access_token }, [app.id, app.client_secret])
    expect(r.status).toBe(200)
    expect((await oauthMe(grant.access_token)).status).toBe(401)
  })

  test('an access token past expires_in fails although it was cached', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const grant = await grantTokens(user, app)
    expect((await oauthMe(grant.access_token)).status).toBe(200)
    clock.advance(grant.expires_in * 1000)
    expect((await oauthMe(grant.access_token)).status).toBe(401)
  })

  test('disabling the user ends the tokens it granted', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const grant = await grantTokens(user, app)
    expect((await oauthMe(grant.access_token)).status).toBe(200)
    expect(
      (await api('POST', '/users/@me/disable', { token: user.token, body: { password: user.password } })).status,
    ).toBe(204)
    // A disabled account acts through no token, its applications' included.
    expect((await oauthMe(grant.access_token)).status).toBe(401)
  })
})
