import { updateUser } from '../../src/accounts/store'
import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { lockUser } from '../../src/auth/lock'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { readOutbox } from '../../src/delivery'
import { CODE_ALREADY_USED } from '../../src/mfa/errors'
import { insertSmsFactor } from '../../src/mfa/store'
import { users } from '../../src/accounts/tables'
import { GatewayClient } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { elevated, totpCode, userWithTotp } from '../mfa/helpers'
import { lastLinkToken, lastSmsCode, uniqueEmail, withConfig } from './helpers'

afterEach(resetWorld)

const NEW_PASSWORD = 'a completely new passphrase'
const forgot = (login: string) => api('POST', '/auth/forgot', { body: { login } })
const login = (email: string, password: string) => api('POST', '/auth/login', { body: { login: email, password } })
const uniquePhone = () => `+1559${Math.floor(1e6 + Math.random() * 8.99e6)}`

async function resetToken(email: string) {
  expect((await forgot(email)).status).toBe(204)
  return (await lastLinkToken(email, 'reset'))!
}

describe('password reset by e-mail', () => {
  test('unknown and known addresses both get 204; only the known one gets a link', async () => {
    const ghost = uniqueEmail('ghost')
    expect((await forgot(ghost)).status).toBe(204)
    expect(await readOutbox(ghost)).toHaveLength(0)
    const user = await makeUser()
    expect(await resetToken(user.email)).toBeDefined()
  })

  test('reset: new password and token; other sessions end (AUTH_SESSION_CHANGE, then 4004); single use', async () => {
    const user = await makeUser()
    const { client } = await GatewayClient.identified(user.token)
    const token = await resetToken(user.email)
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/auth/reset', { body: { token, password: NEW_PASSWORD } })),
    )
    const ok = results.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    const newToken = ok[0].body.token as string
    expect(typeof newToken).toBe('string')
    expect(ok[0].body.user_id).toBe(user.id)
    const change = await client.waitFor('AUTH_SESSION_CHANGE')
    expect((await client.waitForClose()).code).toBe(4004)
    const sessions = await api('GET', '/auth/sessions', { token: newToken })
    expect(sessions.body.user_sessions.map((s: any) => s.id_hash)).toEqual([change.d.auth_session_id_hash])
    expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(401)
    expect((await login(user.email, user.password)).status).toBe(400)
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200)
  })

  test("the caller's own connections move to the new session and stay open", async () => {
    const user = await makeUser()
    const { client } = await GatewayClient.identified(user.token)
    const token = await resetToken(user.email)
    const r = await api('POST', '/auth/reset', { token: user.token, body: { token, password: NEW_PASSWORD } })
    expect(r.status).toBe(200)
    await client.waitFor('AUTH_SESSION_CHANGE')
    await Bun.sleep(100)
    expect(client.closed).toBeNull()
  })

  test('a new link replaces the old; links expire after an hour; weak or long passwords are refused', async () => {
    const user = await makeUser()
    const old = await resetToken(user.email)
    const token = await resetToken(user.email)
    expect(
      (await api('POST', '/auth/reset', { body: { token: old, password: NEW_PASSWORD } })).body.errors.token._errors[0]
        .code,
    ).toBe('TOKEN_INVALID')
    expect(
      (await api('POST', '/auth/reset', { body: { token, password: 'password123' } })).body.errors.password._errors[0]
        .code,
    ).toBe('PASSWORD_TOO_WEAK')
    expect((await api('POST', '/auth/reset', { body: { token, password: 'x'.repeat(73) } })).status).toBe(400)
    clock.advance(3600_000 + 1000)
    expect((await api('POST', '/auth/reset', { body: { token, password: NEW_PASSWORD } })).status).toBe(400)
  })

  test('a locked account logs in again after a reset', async () => {
    const user = await makeUser()
    await lockUser(user.id)
    expect((await login(user.email, user.password)).body.errors.login._errors[0].code).toBe(
      'ACCOUNT_COMPROMISED_RESET_PASSWORD',
    )
    const token = await resetToken(user.email)
    expect((await api('POST', '/auth/reset', { body: { token, password: NEW_PASSWORD } })).status).toBe(200)
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200)
  })

  test('users with MFA answer a second factor before the password changes', async () => {
    const user = await userWithTotp()
    const token = await resetToken(user.email)
    const first = await api('POST', '/auth/reset', { body: { token, password: NEW_PASSWORD } })
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ user_id: user.id, mfa: true, totp: true, backup: true })
    expect(first.body.token).toBeUndefined()
    const wrong = await api('POST', '/auth/reset', {
      body: {
        token,
        password: NEW_PASSWORD,
        ticket: first.body.ticket,
        method: 'totp',
        code: totpCode(user.secret, 9),
      },
    })
    expect(wrong.body.code).toBe(60008)
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(400) // not changed yet
    // This period's code spent at a login is refused at the reset, saying it was used.
    const loginTicket = (await login(user.email, user.password)).body.ticket
    const code = totpCode(user.secret)
    expect((await api('POST', '/auth/mfa/totp', { body: { ticket: loginTicket, code } })).status).toBe(200)
    const used = await api('POST', '/auth/reset', {
      body: { token, password: NEW_PASSWORD, ticket: first.body.ticket, method: 'totp', code },
    })
    expect(used.status).toBe(400)
    expect(used.body).toEqual({ code: 60008, message: CODE_ALREADY_USED })
    const r = await api('POST', '/auth/reset', {
      body: {
        token,
        password: NEW_PASSWORD,
        ticket: first.body.ticket,
        method: 'totp',
        code: totpCode(user.secret, 1),
      },
    })
    expect(r.status).toBe(200)
    expect(typeof r.body.token).toBe('string')
    expect((await login(user.email, NEW_PASSWORD)).body.mfa).toBe(true)
  })
})

describe('checking a reset token (POST /auth/reset/check)', () => {
  const check = (token: unknown, headers?: Record<string, string>) =>
    api('POST', '/auth/reset/check', { body: { token }, headers })

  test('204 while the link works (without spending it), then 400 once used, expired or unknown; no account named', async () => {
    const user = await makeUser()
    const token = await resetToken(user.email)
    const fresh = await check(token)
    expect(fresh.status).toBe(204)
    expect(fresh.body).toBeFalsy()
    expect((await check(token)).status).toBe(204) // checking again spends nothing
    expect((await api('POST', '/auth/reset', { body: { token, password: NEW_PASSWORD } })).status).toBe(200)

    const used = await check(token)
    expect(used.status).toBe(400)
    const invalid = {
      code: 50035,
      message: 'Invalid Form Body',
      errors: { token: { _errors: [{ code: 'TOKEN_INVALID', message: 'Invalid or expired token.' }] } },
    }
    expect(used.body).toEqual(invalid)
    expect((await check('not-a-token-at-all')).body).toEqual(invalid)

    const later = await resetToken(user.email)
    expect((await check(later)).status).toBe(204)
    clock.advance(3600_000 + 1)
    expect((await check(later)).body).toEqual(invalid)
  })

  test('a phone reset token checks too; bad bodies are 400 50035, never 5xx', async () => {
    const user = await makeUser()
    const phone = uniquePhone()
    await updateUser(user.id, { phone })
    expect((await forgot(phone)).body.code).toBe(70007)
    const verified = await api('POST', '/phone-verifications/verify', {
      body: { phone, code: await lastSmsCode(phone) },
    })
    expect((await check(verified.body.token)).status).toBe(204)
    for (const body of [{}, { token: 5 }, { token: 'x'.repeat(300) }, []]) {
      const r = await api('POST', '/auth/reset/check', { body })
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
    }
  })

  test('limited per IP, an IPv6 client by its /64: 429 with retry_after', async () => {
    await withConfig({ trustProxy: true }, async () => {
      for (let i = 0; i < 30; i++)
        expect((await check(`guess-${i}`, { 'x-forwarded-for': `2001:db8:1:2::${i.toString(16)}` })).status).toBe(400)
      const refused = await check('guess', { 'x-forwarded-for': '2001:db8:1:2:ffff::1' })
      expect(refused.status).toBe(429)
      expect(refused.body.retry_after).toBeGreaterThan(0)
      // Another /64, and an IPv4 client, have their own allowance.
      expect((await check('guess', { 'x-forwarded-for': '2001:db8:1:3::1' })).status).toBe(400)
      expect((await check('guess', { 'x-forwarded-for': '198.51.100.7' })).status).toBe(400)
    })
  })
})

describe('password reset by phone', () => {
  test('70007 with a texted code; the verified phone token resets; unknown phones look the same', async () => {
    const user = await makeUser()
    const phone = uniquePhone()
    await updateUser(user.id, { phone })
    const r = await forgot(phone)
    expect(r.status).toBe(400)
    expect(r.body.code).toBe(70007)
    const verified = await api('POST', '/phone-verifications/verify', {
      body: { phone, code: await lastSmsCode(phone) },
    })
    expect(verified.status).toBe(200)
    expect(
      (await api('POST', '/auth/reset', { body: { token: verified.body.token, password: NEW_PASSWORD } })).status,
    ).toBe(200)
    expect((await login(phone, NEW_PASSWORD)).status).toBe(200)
    const unknown = await forgot(uniquePhone())
    expect(unknown.body.code).toBe(70007)
  })

  test('a phone that is also the second factor: 70009 and the e-mail link', async () => {
    const user = await userWithTotp()
    const phone = uniquePhone()
    await updateUser(user.id, { phone })
    await insertSmsFactor(user.id) // through the store, which forgets the user's cached factors
    const r = await forgot(phone)
    expect(r.body.code).toBe(70009)
    expect(await lastLinkToken(user.email, 'reset')).toBeDefined()
  })
})

describe('e-mail change and revert', () => {
  test('change (elevated by password) mails a revert link; revert restores, secures and ends everything, once', async () => {
    const user = await makeUser()
    const phone = uniquePhone()
    await updateUser(user.id, { phone })
    const { rememberPhone } = await import('../../src/accounts/phone')
    rememberPhone(user.id, phone)
    const next = uniqueEmail('new')
    const { first, retry } = await elevated(
      'PATCH',
      '/users/@me',
      user.token,
      { email: next, password: user.password },
      'password',
      () => user.password,
    )
    expect(first.status).toBe(401)
    expect(first.body.mfa.methods).toEqual([{ type: 'password' }])
    expect(retry.status).toBe(200)
    expect(retry.body).toMatchObject({ email: next, verified: false })
    const revert = (await lastLinkToken(user.email, 'wasntme'))!
    expect(revert).toBeDefined()

    const { client } = await GatewayClient.identified(user.token)
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/auth/revert', { body: { token: revert, password: NEW_PASSWORD } }),
      ),
    )
    const ok = results.filter((r) => r.status === 200)
    expect(ok).toHaveLength(1)
    expect(ok[0].body).toEqual({ email: user.email })
    expect((await client.waitForClose()).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(401)
    const row = (await db().select().from(users).where(eq(users.id, user.id)).get())!
    expect(row).toMatchObject({ email: user.email, phone: null })
    expect((await login(user.email, NEW_PASSWORD)).status).toBe(200)
    // The number is blocked for every account.
    expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(400)
  })

  test('revert removes MFA; the link lasts two days', async () => {
    const user = await userWithTotp()
    const next = uniqueEmail('new')
    const { retry } = await elevated(
      'PATCH',
      '/users/@me',
      user.token,
      { email: next, password: user.password },
      'totp',
      () => totpCode(user.secret),
    )
    expect(retry.status).toBe(200)
    const revert = (await lastLinkToken(user.email, 'wasntme'))!
    expect((await api('POST', '/auth/revert', { body: { token: revert, password: NEW_PASSWORD } })).status).toBe(200)
    const r = await login(user.email, NEW_PASSWORD)
    expect(r.body.mfa).toBeUndefined()
    expect(typeof r.body.token).toBe('string')

    const other = await makeUser()
    await elevated(
      'PATCH',
      '/users/@me',
      other.token,
      { email: uniqueEmail('n'), password: other.password },
      'password',
      () => other.password,
    )
    const late = (await lastLinkToken(other.email, 'wasntme'))!
    clock.advance(2 * 86400_000 + 1000)
    expect((await api('POST', '/auth/revert', { body: { token: late, password: NEW_PASSWORD } })).status).toBe(400)
  })

  test('a taken address and a wrong password are refused', async () => {
    const user = await makeUser()
    const other = await makeUser()
    const taken = await elevated(
      'PATCH',
      '/users/@me',
      user.token,
      { email: other.email, password: user.password },
      'password',
      () => user.password,
    )
    expect(taken.retry.body.errors.email._errors[0].code).toBe('EMAIL_ALREADY_REGISTERED')
    const wrong = await api('PATCH', '/users/@me', {
      token: user.token,
      body: { email: uniqueEmail(), password: 'not the password' },
    })
    expect(wrong.body.errors.password._errors[0].code).toBe('PASSWORD_DOES_NOT_MATCH')
  })
})

describe('POST /auth/sessions/logout', () => {
  test('elevated; ends exactly the named sessions of the caller; 1-64 hashes', async () => {
    const user = await makeUser()
    const second = (await login(user.email, user.password)).body.token
    const third = (await login(user.email, user.password)).body.token
    const stranger = await makeUser()
    const hashOf = async (token: string) => (await GatewayClient.identified(token)).ready.auth_session_id_hash
    const { client, ready } = await GatewayClient.identified(second)
    const strangerHash = await hashOf(stranger.token)
    const body = { session_id_hashes: [ready.auth_session_id_hash, strangerHash] }
    const { first, retry, jwt } = await elevated(
      'POST',
      '/auth/sessions/logout',
      user.token,
      body,
      'password',
      () => user.password,
    )
    expect(first.body.code).toBe(60003)
    expect(retry.status).toBe(204)
    expect((await client.waitForClose()).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: second })).status).toBe(401)
    expect((await api('GET', '/users/@me', { token: third })).status).toBe(200)
    expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(200)
    expect((await api('GET', '/users/@me', { token: stranger.token })).status).toBe(200)
    const call = (hashes: string[]) =>
      api('POST', '/auth/sessions/logout', {
        token: user.token,
        body: { session_id_hashes: hashes },
        headers: { 'x-service-mfa-authorization': jwt! },
      })
    expect((await call([])).body.code).toBe(50035)
    expect((await call(Array.from({ length: 65 }, (_, i) => `h${i}`))).body.code).toBe(50035)
    expect((await call(Array.from({ length: 64 }, (_, i) => `h${i}`))).status).toBe(204)
  })
})
