import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { users } from '../../src/accounts/tables'
import { api, makeUser, resetWorld } from '../helpers'
import { makeGuild } from '../guilds/helpers'
import { lastLinkToken, lastSmsCode, PASSWORD, registerUser, uniqueEmail, uniqueName, withConfig } from './helpers'

afterEach(resetWorld)

describe('registration', () => {
  test('returns a token that works and mails a verification link (single use)', async () => {
    const { r, email } = await registerUser()
    expect(r.status).toBe(200)
    const me = await api('GET', '/users/@me', { token: r.body.token })
    expect(me.body).toMatchObject({ email, verified: false })
    const token = await lastLinkToken(email, 'verify')
    expect(token).toBeDefined()
    const results = await Promise.all(
      Array.from({ length: 20 }, () => api('POST', '/auth/verify', { body: { token } })),
    )
    expect(results.filter((x) => x.status === 200)).toHaveLength(1)
    expect((await api('GET', '/users/@me', { token: r.body.token })).body.verified).toBe(true)
  })

  test('username or global_name is required; global_name alone gets a random unique username', async () => {
    const none = await api('POST', '/auth/register', {
      body: { email: uniqueEmail(), password: PASSWORD, consent: true },
    })
    expect(none.status).toBe(400)
    expect(none.body.errors.username._errors[0].code).toBe('BASE_TYPE_REQUIRED')
    const a = await registerUser({ username: undefined, global_name: 'Cool Person' })
    const b = await registerUser({ username: undefined, global_name: 'Cool Person' })
    const ua = (await api('GET', '/users/@me', { token: a.r.body.token })).body
    const ub = (await api('GET', '/users/@me', { token: b.r.body.token })).body
    expect(ua.global_name).toBe('Cool Person')
    expect(ua.username).not.toBe(ub.username)
    expect(ua.username).toMatch(/^[a-z0-9_.]{2,32}$/)
  })

  test('refusals: taken e-mail and username, bad username, common or short password, underage, bad date', async () => {
    const first = await registerUser()
    const cases: [Record<string, unknown>, string, string][] = [
      [{ email: first.email }, 'email', 'EMAIL_ALREADY_REGISTERED'],
      [{ username: first.username }, 'username', 'USERNAME_ALREADY_TAKEN'],
      [{ username: 'Bad Name!' }, 'username', 'USERNAME_INVALID_CHARACTERS'],
      [{ username: 'a..b' }, 'username', 'USERNAME_INVALID_CHARACTERS'],
      [{ username: 'x' }, 'username', 'BASE_TYPE_BAD_LENGTH'],
      [{ password: 'password123' }, 'password', 'PASSWORD_TOO_WEAK'],
      [{ password: 'short' }, 'password', 'BASE_TYPE_BAD_LENGTH'],
      [{ password: 'x'.repeat(73) }, 'password', 'BASE_TYPE_BAD_LENGTH'],
      [{ email: 'not-an-email' }, 'email', 'EMAIL_TYPE_INVALID_EMAIL'],
      [
        { date_of_birth: new Date(Date.now() - 12 * 366 * 86400_000).toISOString().slice(0, 10) },
        'date_of_birth',
        'DATE_OF_BIRTH_IS_UNDERAGE',
      ],
      [{ date_of_birth: '2001-02-30' }, 'date_of_birth', 'DATE_OF_BIRTH_INVALID'],
    ]
    for (const [extra, field, code] of cases) {
      const { r } = await registerUser(extra)
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
      expect(r.body.errors[field]._errors[0].code).toBe(code)
    }
    expect((await registerUser({ password: 'Zq8#mW2!vK9$'.repeat(6) })).r.status).toBe(200) // exactly 72
    expect((await registerUser({ password: 'Zq8#mW2!vK9$' })).r.status).toBe(200)
    expect(
      (await registerUser({ date_of_birth: new Date(Date.now() - 14 * 366 * 86400_000).toISOString().slice(0, 10) })).r
        .status,
    ).toBe(200)
  })

  test('consent is required where location metadata says so', async () => {
    await withConfig({ trustProxy: true }, async () => {
      const german = { 'x-forwarded-for': '81.169.145.150' } // a German address in GeoLite2
      const meta = await api('GET', '/auth/location-metadata', { headers: german })
      expect(meta.body).toEqual({
        country_code: 'DE',
        consent_required: true,
        promotional_email_opt_in: { required: true, pre_checked: false },
      })
      const refused = await registerUser({ consent: undefined }, german)
      expect(refused.r.body.errors.consent._errors[0].code).toBe('CONSENT_REQUIRED')
      expect((await registerUser({ consent: true }, german)).r.status).toBe(200)
      const us = { 'x-forwarded-for': '8.8.8.8' }
      expect((await api('GET', '/auth/location-metadata', { headers: us })).body.consent_required).toBe(false)
      expect((await registerUser({ consent: undefined }, us)).r.status).toBe(200)
    })
  })

  test('a valid unused fingerprint becomes the user id; a used or forged one does not', async () => {
    const { fingerprint } = (await api('POST', '/auth/fingerprint')).body
    expect(fingerprint).toMatch(/^\d+\.[A-Za-z0-9_-]+$/)
    const first = await registerUser({ fingerprint })
    const me = await api('GET', '/users/@me', { token: first.r.body.token })
    expect(me.body.id).toBe(fingerprint.split('.')[0])
    const second = await registerUser({ fingerprint })
    expect((await api('GET', '/users/@me', { token: second.r.body.token })).body.id).not.toBe(me.body.id)
    const forged = `${fingerprint.split('.')[0]}9.AAAA`
    const third = await registerUser({ fingerprint: forged })
    expect((await api('GET', '/users/@me', { token: third.r.body.token })).body.id).not.toBe(forged.split('.')[0])
  })

  test("phone_token makes the phone the account's verified phone", async () => {
    const phone = `+1555${String(Date.now()).slice(-7)}`
    expect((await api('POST', '/auth/register/phone', { body: { phone: 'nope' } })).status).toBe(400)
    expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(204)
    const code = await lastSmsCode(phone)
    expect(
      (
        await api('POST', '/phone-verifications/verify', {
          body: { phone, code: '000000' === code ? '111111' : '000000' },
        })
      ).body.code,
    ).toBe(50037)
    const verified = await api('POST', '/phone-verifications/verify', { body: { phone, code } })
    expect(verified.status).toBe(200)
    expect((await api('POST', '/phone-verifications/verify', { body: { phone, code } })).status).toBe(400) // single use
    const { r } = await registerUser({ phone_token: verified.body.token })
    expect(r.status).toBe(200)
    expect((await api('GET', '/users/@me', { token: r.body.token })).body.phone).toBe(phone)
    expect((await registerUser({ phone_token: verified.body.token })).r.status).toBe(400)
  })

  test('phone codes: 5 texts per phone and 10 per IP an hour, 10-minute life, dead after 5 wrong tries', async () => {
    const phone = `+1556${String(Date.now()).slice(-7)}`
    for (let i = 0; i < 5; i++)
      expect((await api('POST', '/auth/register/phone', { body: { phone } })).status).toBe(204)
    const limited = await api('POST', '/auth/register/phone', { body: { phone } })
    expect(limited.status).toBe(429)
    expect(limited.body.retry_after).toBeGreaterThan(0)
    for (let i = 0; i < 5; i++)
      expect((await api('POST', '/auth/register/phone', { body: { phone: `+1557000000${i}` } })).status).toBe(204)
    expect((await api('POST', '/auth/register/phone', { body: { phone: '+15570000009' } })).status).toBe(429) // 11th from this IP
    resetWorld()

    const code = await lastSmsCode(phone)
    const wrong = code === '123456' ? '654321' : '123456'
    for (let i = 0; i < 5; i++)
      expect((await api('POST', '/phone-verifications/verify', { body: { phone, code: wrong } })).status).toBe(400)
    expect((await api('POST', '/phone-verifications/verify', { body: { phone, code } })).status).toBe(400) // killed

    await api('POST', '/auth/register/phone', { body: { phone } })
    const fresh = await lastSmsCode(phone)
    clock.advance(10 * 60_000 + 1)
    expect((await api('POST', '/phone-verifications/verify', { body: { phone, code: fresh } })).status).toBe(400) // expired
  })

  test('an invite joins the new user to the server', async () => {
    const { owner, guild, channelId } = await makeGuild()
    const invite = await api('POST', `/channels/${channelId}/invites`, { token: owner.token, body: { unique: true } })
    const { r } = await registerUser({ invite: invite.body.code })
    expect(r.body.show_verification_form).toBe(false)
    expect((await api('GET', `/guilds/${guild.id}`, { token: r.body.token })).status).toBe(200)
    expect((await registerUser({ invite: 'doesnotexist' })).r.status).toBe(200)
  })

  test('registrations per IP are rate-limited with retry_after', async () => {
    let last
    for (let i = 0; i < 30; i++)
      expect((await api('POST', '/auth/register', { body: { global_name: 'x' } })).status).not.toBe(429)
    last = await api('POST', '/auth/register', { body: { global_name: 'x' } })
    expect(last!.status).toBe(429)
    expect(last!.body.retry_after).toBeGreaterThan(0)
    expect(last!.headers.get('retry-after')).toBeTruthy()
  })

  test('the user row keeps the date of birth and a hashed password only', async () => {
    const { r } = await registerUser({ date_of_birth: '1991-05-06' })
    const id = (await api('GET', '/users/@me', { token: r.body.token })).body.id
    const row = (await db().select().from(users).where(eq(users.id, id)).get())!
    expect(row.dateOfBirth).toBe('1991-05-06')
    expect(row.passwordHash).toStartWith('$argon2id$v=19$m=19456,t=2,p=1$')
    expect(row.passwordHash).not.toContain(PASSWORD)
  })
})

describe('verification resend and usernames', () => {
  test('resend sends a new link', async () => {
    const { r, email } = await registerUser()
    const before = await lastLinkToken(email, 'verify')
    expect((await api('POST', '/auth/verify/resend', { token: r.body.token })).status).toBe(204)
    const after = await lastLinkToken(email, 'verify')
    expect(after).not.toBe(before)
    expect((await api('POST', '/auth/verify', { body: { token: after } })).status).toBe(200)
  })

  test('username attempt and suggestions', async () => {
    const user = await makeUser()
    expect(
      (await api('POST', '/unique-username/username-attempt-unauthed', { body: { username: user.username } })).body,
    ).toEqual({ taken: true })
    expect(
      (await api('POST', '/unique-username/username-attempt-unauthed', { body: { username: uniqueName('free') } }))
        .body,
    ).toEqual({ taken: false })
    expect(
      (await api('POST', '/unique-username/username-attempt-unauthed', { body: { username: 'Not Valid' } })).body,
    ).toEqual({ taken: null })
    const s = await api('GET', '/unique-username/username-suggestions-unauthed?global_name=Fancy%20Name')
    expect(s.body.username).toMatch(/^fancyname/)
    expect((await api('GET', '/unique-username/username-suggestions-unauthed')).body.username).toMatch(
      /^[a-z0-9_.]{2,32}$/,
    )
  })

  test('password validation scores 0-4 and enforces 8-72', async () => {
    const weak = await api('POST', '/auth/password/validate', { body: { password: 'password1' } })
    expect(weak.body).toEqual({ valid: false, password_strength: 0 })
    const strong = await api('POST', '/auth/password/validate', { body: { password: 'xK9#mQ2$vL7!pR4&' } })
    expect(strong.body).toEqual({ valid: true, password_strength: 4 })
    expect((await api('POST', '/auth/password/validate', { body: { password: 'x'.repeat(7) } })).status).toBe(400)
    expect((await api('POST', '/auth/password/validate', { body: { password: 'x'.repeat(73) } })).status).toBe(400)
  })
})
