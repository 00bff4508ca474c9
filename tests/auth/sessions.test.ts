import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { lockUser } from '../../src/auth/lock'
import { pushDevices } from '../../src/auth/tables'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { GatewayClient } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { withConfig } from './helpers'

afterEach(resetWorld)

const superProps = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64')
const loginAs = (user: { email: string; password: string }, headers: Record<string, string> = {}) =>
  api('POST', '/auth/login', { body: { login: user.email, password: user.password }, headers })

describe('GET /auth/sessions', () => {
  test('lists each session with client info from X-Super-Properties or User-Agent, newest first', async () => {
    const user = await makeUser()
    const a = await loginAs(user, { 'x-super-properties': superProps({ os: 'Windows', browser: 'Discord Client' }) })
    clock.advance(120_000)
    const b = await loginAs(user, {
      'user-agent':
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36',
    })
    const r = await api('GET', '/auth/sessions', { token: b.body.token })
    expect(r.status).toBe(200)
    const list = r.body.user_sessions
    expect(list).toHaveLength(3) // makeUser's own session + two logins
    for (const s of list) {
      expect(Object.keys(s).sort()).toEqual(['approx_last_used_time', 'client_info', 'id_hash'])
      expect(new Date(s.approx_last_used_time).toISOString()).toBe(s.approx_last_used_time)
    }
    expect(list[0].client_info).toEqual({ os: 'macOS', platform: 'Chrome', location: expect.any(String) })
    expect(list.some((s: any) => s.client_info.os === 'Windows' && s.client_info.platform === 'Discord Client')).toBe(
      true,
    )
    expect(list[0].client_info.location).toBe('Unknown') // loopback has no country
    expect(a.status).toBe(200)
  })

  test('id_hash equals READY auth_session_id_hash', async () => {
    const user = await makeUser()
    const { client, ready } = await GatewayClient.identified(user.token)
    const r = await api('GET', '/auth/sessions', { token: user.token })
    expect(r.body.user_sessions.map((s: any) => s.id_hash)).toContain(ready.auth_session_id_hash)
    client.close()
  })

  test('at most 50 are listed', async () => {
    const user = await makeUser()
    const { createSession } = await import('../../src/accounts/sessions')
    for (let i = 0; i < 55; i++) await createSession(user.id)
    expect((await api('GET', '/auth/sessions', { token: user.token })).body.user_sessions).toHaveLength(50)
  })

  test('needs a user token', async () => {
    expect((await api('GET', '/auth/sessions')).status).toBe(401)
  })
})

describe('POST /auth/logout', () => {
  test('ends the session at once: REST 401, gateway closed with 4004, push token removed; other sessions live', async () => {
    const user = await makeUser()
    const other = (await loginAs(user)).body.token
    const { client } = await GatewayClient.identified(user.token)
    expect(
      (
        await api('POST', '/users/@me/devices', {
          token: user.token,
          body: { provider: 'gcm', token: 'push-abc', voip_provider: 'apns', voip_token: 'voip-1' },
        })
      ).status,
    ).toBe(204)
    expect(await db().select().from(pushDevices).where(eq(pushDevices.token, 'push-abc')).all()).toHaveLength(1)

    const r = await api('POST', '/auth/logout', { token: user.token, body: { provider: 'gcm', token: 'push-abc' } })
    expect(r.status).toBe(204)
    expect((await client.waitForClose()).code).toBe(4004)
    const after = await api('GET', '/users/@me', { token: user.token })
    expect(after.status).toBe(401)
    expect(after.body).toEqual({ message: '401: Unauthorized', code: 0 })
    expect(await db().select().from(pushDevices).where(eq(pushDevices.token, 'push-abc')).all()).toHaveLength(0)
    expect((await api('GET', '/users/@me', { token: other })).status).toBe(200)
    // The ended token cannot identify again.
    const again = await GatewayClient.connect()
    again.send(2, { token: user.token, properties: {} })
    expect((await again.waitForClose()).code).toBe(4004)
  })

  test('works with no body; a second logout with the same token is 401', async () => {
    const user = await makeUser()
    expect((await api('POST', '/auth/logout', { token: user.token })).status).toBe(204)
    expect((await api('POST', '/auth/logout', { token: user.token })).status).toBe(401)
  })
})

describe('POST /users/@me/devices', () => {
  test('registers once per session, provider and token; validates', async () => {
    const user = await makeUser()
    for (let i = 0; i < 2; i++)
      expect(
        (await api('POST', '/users/@me/devices', { token: user.token, body: { provider: 'apns', token: 'dev-1' } }))
          .status,
      ).toBe(204)
    expect(await db().select().from(pushDevices).where(eq(pushDevices.token, 'dev-1')).all()).toHaveLength(1)
    const bad = await api('POST', '/users/@me/devices', { token: user.token, body: { provider: 'apns' } })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.token._errors[0].code).toBeDefined()
    expect((await api('POST', '/users/@me/devices', { body: { provider: 'apns', token: 'x' } })).status).toBe(401)
  })
})

describe('session life', () => {
  test('a session idle past the limit is refused like a logged-out one; use keeps it alive', async () => {
    await withConfig({ sessionIdleDays: 90 }, async () => {
      const user = await makeUser()
      const active = (await loginAs(user)).body.token
      clock.advance(89 * 86400_000)
      expect((await api('GET', '/users/@me', { token: active })).status).toBe(200)
      clock.advance(2 * 86400_000)
      expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(401) // idle 91 days
      expect((await api('GET', '/users/@me', { token: active })).status).toBe(200) // used 2 days ago
    })
  })

  test('the idle limit is settable', async () => {
    await withConfig({ sessionIdleDays: 1 }, async () => {
      const user = await makeUser()
      clock.advance(86400_000 + 60_000)
      expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(401)
    })
  })

  test('an operator lock ends every session and gateway connection; login then asks for a password reset', async () => {
    const user = await makeUser()
    const second = (await loginAs(user)).body.token
    const { client } = await GatewayClient.identified(second)
    const result = await lockUser(user.id)
    expect(result.sessions_ended).toBe(2)
    expect((await client.waitForClose()).code).toBe(4004)
    for (const token of [user.token, second]) expect((await api('GET', '/users/@me', { token })).status).toBe(401)
    const r = await loginAs(user)
    expect(r.status).toBe(400)
    expect(r.body.errors.login._errors[0].code).toBe('ACCOUNT_COMPROMISED_RESET_PASSWORD')
  })
})

describe('settings', () => {
  test('GET returns the login settings object; PATCH changes locale and theme and emits USER_SETTINGS_UPDATE', async () => {
    const user = await makeUser()
    const before = await api('GET', '/users/@me/settings', { token: user.token })
    expect(before.body).toEqual({ locale: 'en-US', theme: 'dark' })
    const { client } = await GatewayClient.identified(user.token)
    const r = await api('PATCH', '/users/@me/settings', { token: user.token, body: { locale: 'fr', theme: 'light' } })
    expect(r.body).toEqual({ locale: 'fr', theme: 'light' })
    expect((await client.waitFor('USER_SETTINGS_UPDATE')).d).toEqual({ locale: 'fr', theme: 'light' })
    expect((await loginAs(user)).body.user_settings).toEqual({ locale: 'fr', theme: 'light' })
    const bad = await api('PATCH', '/users/@me/settings', { token: user.token, body: { theme: 'purple' } })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe(50035)
    client.close()
  })
})
