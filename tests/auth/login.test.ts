import { updateUser } from '../../src/accounts/store'
import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { authSessions, knownIps } from '../../src/accounts/tables'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { users } from '../../src/accounts/tables'
import { api, makeUser, resetWorld } from '../helpers'
import { lastLinkToken, withConfig } from './helpers'

afterEach(resetWorld)

const login = (body: unknown, headers: Record<string, string> = {}) => api('POST', '/auth/login', { body, headers })

describe('POST /auth/login', () => {
  test('e-mail and password → token, user_settings; the token works', async () => {
    const user = await makeUser()
    const r = await login({ login: user.email.toUpperCase(), password: user.password })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      user_id: user.id,
      user_settings: { locale: expect.any(String), theme: expect.any(String) },
    })
    expect(r.body.required_actions).toBeUndefined()
    expect((await api('GET', '/users/@me', { token: r.body.token })).body.id).toBe(user.id)
  })

  test('E.164 phone and password', async () => {
    const user = await makeUser()
    const phone = `+1555${Math.floor(1e6 + Math.random() * 8e6)}`
    await updateUser(user.id, { phone })
    const r = await login({ login: phone, password: user.password })
    expect(r.status).toBe(200)
    expect(r.body.user_id).toBe(user.id)
  })

  test('unknown login and wrong password get the same INVALID_LOGIN body', async () => {
    const user = await makeUser()
    const unknown = await login({ login: 'nobody-here@example.test', password: 'whatever-password' })
    const wrong = await login({ login: user.email, password: 'whatever-password' })
    expect(unknown.status).toBe(400)
    expect(wrong.status).toBe(400)
    expect(unknown.body).toEqual(wrong.body)
    expect(wrong.body).toMatchObject({
      code: 50035,
      errors: { login: { _errors: [{ code: 'INVALID_LOGIN' }] }, password: { _errors: [{ code: 'INVALID_LOGIN' }] } },
    })
  })

  test('missing or malformed fields are form errors, never 500', async () => {
    for (const body of [
      {},
      { login: 'a@b.c' },
      { login: 5, password: 'x' },
      { login: 'a@b.c', password: 'x'.repeat(73) },
    ]) {
      const r = await login(body)
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
    }
    const raw = await api('POST', '/auth/login', { raw: '{nope' })
    expect(raw.status).toBe(400)
    expect(raw.body.code).toBe(50109)
  })

  test('login_source and gift_code_sku_id are validated and recorded on the session', async () => {
    const user = await makeUser()
    const bad = await login({ login: user.email, password: user.password, login_source: 'nowhere' })
    expect(bad.status).toBe(400)
    expect(bad.body.errors.login_source._errors[0].code).toBe('BASE_TYPE_CHOICES')
    const badSku = await login({ login: user.email, password: user.password, gift_code_sku_id: 'abc' })
    expect(badSku.body.errors.gift_code_sku_id._errors[0].code).toBeDefined()
    const ok = await login({
      login: user.email,
      password: user.password,
      login_source: 'gift',
      gift_code_sku_id: '123456789',
    })
    expect(ok.status).toBe(200)
    const rows = await db().select().from(authSessions).where(eq(authSessions.userId, user.id)).all()
    expect(rows.some((s) => s.loginSource === 'gift' && s.giftCodeSkuId === '123456789')).toBe(true)
  })

  test('a valid token in Authorization → success whatever the body', async () => {
    const user = await makeUser()
    const r = await api('POST', '/auth/login', { token: user.token, body: { login: 'junk', password: 'junk' } })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ user_id: user.id, token: user.token })
  })

  test('disabled and deletion-scheduled accounts: 20013 / 20011 unless undelete, which restores them', async () => {
    for (const [state, code] of [
      ['disabled', 20013],
      ['deletion_scheduled', 20011],
    ] as const) {
      const user = await makeUser()
      await updateUser(user.id, { state })
      const refused = await login({ login: user.email, password: user.password })
      expect(refused.status).toBe(400)
      expect(refused.body.code).toBe(code)
      // A wrong password still says nothing about the state.
      expect(
        (await login({ login: user.email, password: 'wrong-password-here', undelete: true })).body.errors.login
          ._errors[0].code,
      ).toBe('INVALID_LOGIN')
      const restored = await login({ login: user.email, password: user.password, undelete: true })
      expect(restored.status).toBe(200)
      expect((await db().select().from(users).where(eq(users.id, user.id)).get())!.state).toBe('active')
      expect((await login({ login: user.email, password: user.password })).status).toBe(200)
    }
  })

  test('required_actions update_password when the stored password no longer meets the policy', async () => {
    const user = await makeUser({ password: 'password123' })
    const r = await login({ login: user.email, password: 'password123' })
    expect(r.status).toBe(200)
    expect(r.body.required_actions).toEqual(['update_password'])
    // The verdict is kept with the password (judged once): the next login answers the same without judging again.
    expect((await db().select().from(users).where(eq(users.id, user.id)).get())!.passwordWeak).toBe(true)
    expect((await login({ login: user.email, password: 'password123' })).body.required_actions).toEqual([
      'update_password',
    ])
  })

  test('a new password is judged again: the weak verdict does not outlive the password', async () => {
    const user = await makeUser({ password: 'password123' })
    expect((await login({ login: user.email, password: 'password123' })).body.required_actions).toEqual([
      'update_password',
    ])
    const strong = 'a much better passphrase 7'
    const changed = await api('PATCH', '/users/@me', {
      token: user.token,
      body: { password: 'password123', new_password: strong },
    })
    expect(changed.status).toBe(200)
    const r = await login({ login: user.email, password: strong })
    expect(r.status).toBe(200)
    expect(r.body.required_actions ?? []).toEqual([])
  })

  test('a hash made with other parameters is replaced on login', async () => {
    const user = await makeUser()
    const old = await Bun.password.hash(user.password, { algorithm: 'argon2id', memoryCost: 4096, timeCost: 1 })
    await updateUser(user.id, { passwordHash: old })
    expect((await login({ login: user.email, password: user.password })).status).toBe(200)
    const stored = (await db().select().from(users).where(eq(users.id, user.id)).get())!.passwordHash!
    expect(stored).not.toBe(old)
    expect(stored).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
    expect(await Bun.password.verify(user.password, stored)).toBe(true)
  })

  test('failed logins per account: the 11th attempt gets 429 with retry_after, even with the right password', async () => {
    const user = await makeUser()
    for (let i = 0; i < 10; i++)
      expect((await login({ login: user.email, password: `wrong-password-${i}` })).status).toBe(400)
    const limited = await login({ login: user.email, password: user.password })
    expect(limited.status).toBe(429)
    expect(limited.body.retry_after).toBeGreaterThan(0)
    expect(limited.headers.get('retry-after')).toBeTruthy()
  })

  test('failed logins per IP: 30 failures, then 429 for any account from that IP', async () => {
    const user = await makeUser()
    for (let i = 0; i < 30; i++) await login({ login: `ghost${i}@example.test`, password: 'wrong-password' })
    const limited = await login({ login: user.email, password: user.password })
    expect(limited.status).toBe(429)
    expect(limited.body.retry_after).toBeGreaterThan(0)
  })

  test('locked (compromised) account answers ACCOUNT_COMPROMISED_RESET_PASSWORD', async () => {
    const user = await makeUser()
    await updateUser(user.id, { compromised: true })
    const r = await login({ login: user.email, password: user.password })
    expect(r.status).toBe(400)
    expect(r.body.errors.login._errors[0].code).toBe('ACCOUNT_COMPROMISED_RESET_PASSWORD')
  })
})

describe('new login location', () => {
  test('a new IP is refused with a mail; authorize-ip (single use) lets the next login pass', async () => {
    await withConfig({ newLoginLocationCheck: true, trustProxy: true }, async () => {
      const user = await makeUser()
      const from = (ip: string) => login({ login: user.email, password: user.password }, { 'x-forwarded-for': ip })
      expect((await from('198.51.100.7')).status).toBe(200) // first login: nothing known yet
      const refused = await from('203.0.113.9')
      expect(refused.status).toBe(400)
      expect(refused.body.errors.login._errors[0].code).toBe('ACCOUNT_LOGIN_VERIFICATION_EMAIL')
      const token = await lastLinkToken(user.email, 'authorize-ip')
      expect(token).toBeDefined()
      const results = await Promise.all(
        Array.from({ length: 20 }, () => api('POST', '/auth/authorize-ip', { body: { token } })),
      )
      expect(results.filter((r) => r.status === 204)).toHaveLength(1)
      expect(results.filter((r) => r.status === 400)).toHaveLength(19)
      expect((await from('203.0.113.9')).status).toBe(200)
      expect(
        (await db().select().from(knownIps).where(eq(knownIps.userId, user.id)).all()).map((r) => r.ip).sort(),
      ).toEqual(['198.51.100.7', '203.0.113.9'])
    })
  })

  test('an IPv6 place is its /64: another address of the same /64 is known, another /64 is new', async () => {
    await withConfig({ newLoginLocationCheck: true, trustProxy: true }, async () => {
      const user = await makeUser()
      const from = (ip: string) => login({ login: user.email, password: user.password }, { 'x-forwarded-for': ip })
      expect((await from('2001:db8:5:7::1')).status).toBe(200) // first login: nothing known yet
      expect((await from('2001:db8:5:7:aaaa:bbbb:cccc:dddd')).status).toBe(200) // the same /64 (a new temporary address)
      const refused = await from('2001:db8:5:8::1')
      expect(refused.status).toBe(400)
      expect(refused.body.errors.login._errors[0].code).toBe('ACCOUNT_LOGIN_VERIFICATION_EMAIL')
      expect((await db().select().from(knownIps).where(eq(knownIps.userId, user.id)).all()).map((r) => r.ip)).toEqual([
        '2001:db8:5:7::/64',
      ])
    })
  })

  test('without TRUST_PROXY, X-Forwarded-For is ignored', async () => {
    await withConfig({ newLoginLocationCheck: true, trustProxy: false }, async () => {
      const user = await makeUser()
      expect((await login({ login: user.email, password: user.password })).status).toBe(200)
      const r = await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '203.0.113.50' })
      expect(r.status).toBe(200)
    })
  })

  test('an unverified e-mail is not asked; the check can be turned off', async () => {
    await withConfig({ newLoginLocationCheck: true, trustProxy: true }, async () => {
      const user = await makeUser()
      await updateUser(user.id, { emailVerified: false })
      expect(
        (await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.1' })).status,
      ).toBe(200)
      expect(
        (await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.2' })).status,
      ).toBe(200)
    })
    await withConfig({ newLoginLocationCheck: false, trustProxy: true }, async () => {
      const user = await makeUser()
      expect(
        (await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.1' })).status,
      ).toBe(200)
      expect(
        (await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.2' })).status,
      ).toBe(200)
    })
  })

  test('an expired authorize-ip token is refused', async () => {
    await withConfig({ newLoginLocationCheck: true, trustProxy: true }, async () => {
      const user = await makeUser()
      await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.20' })
      await login({ login: user.email, password: user.password }, { 'x-forwarded-for': '198.51.100.21' })
      const token = await lastLinkToken(user.email, 'authorize-ip')
      clock.advance(25 * 3600_000)
      expect((await api('POST', '/auth/authorize-ip', { body: { token } })).status).toBe(400)
    })
  })
})
