import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { api, makeUser, resetWorld } from '../helpers'
import { lastSmsCode } from '../auth/helpers'
import { addPhone, elevated, mfaTicket, totpCode, userWithTotp } from './helpers'

afterEach(resetWorld)

describe('phone and SMS factor', () => {
  test('a verified phone is set with the password; taken numbers are refused', async () => {
    const user = await makeUser()
    const phone = await addPhone(user)
    expect((await api('GET', '/users/@me', { token: user.token })).body.phone).toBe(phone)
    const other = await makeUser()
    await api('POST', '/users/@me/phone', { token: other.token, body: { phone } })
    const token = (
      await api('POST', '/phone-verifications/verify', { body: { phone, code: await lastSmsCode(phone) } })
    ).body.token
    const taken = await api('POST', '/users/@me/phone', {
      token: other.token,
      body: { phone_token: token, password: other.password },
    })
    expect(taken.status).toBe(400)
    expect(taken.body.errors.phone_token._errors[0].code).toBe('PHONE_NUMBER_ALREADY_TAKEN')
  })

  test('SMS needs a stronger factor and a phone (60012); then login offers it and a texted code bound to the ticket works', async () => {
    const plain = await makeUser()
    await addPhone(plain)
    expect(
      (await api('POST', '/users/@me/mfa/sms/enable', { token: plain.token, body: { password: plain.password } })).body
        .code,
    ).toBe(60012)

    const user = await userWithTotp()
    expect(
      (await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: user.password } })).body
        .code,
    ).toBe(60012) // no phone yet
    const phone = await addPhone(user)
    expect(
      (await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: 'wrong password!' } }))
        .status,
    ).toBe(400)
    expect(
      (await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: user.password } })).status,
    ).toBe(204)

    const a = await mfaTicket(user)
    expect(a.sms).toBe(true)
    const sent = await api('POST', '/auth/mfa/sms/send', { body: { ticket: a.ticket } })
    expect(sent.status).toBe(200)
    expect(sent.body.phone).toBe(`+${'*'.repeat(phone.length - 5)}${phone.slice(-4)}`)
    const codeA = (await lastSmsCode(phone))!
    const b = await mfaTicket(user)
    expect((await api('POST', '/auth/mfa/sms', { body: { ticket: b.ticket, code: codeA } })).body.code).toBe(60008) // bound to ticket A
    const r = await api('POST', '/auth/mfa/sms', { body: { ticket: a.ticket, code: codeA } })
    expect(r.status).toBe(200)
    expect(typeof r.body.token).toBe('string')

    await api('POST', '/auth/mfa/sms/send', { body: { ticket: b.ticket } })
    const codeB = (await lastSmsCode(phone))!
    clock.advance(10 * 60_000 + 1)
    expect((await api('POST', '/auth/mfa/sms', { body: { ticket: b.ticket, code: codeB } })).status).toBe(400) // expired
    expect((await api('POST', '/auth/mfa/sms/send', { body: { ticket: 'nope' } })).body.code).toBe(60006)
  })

  test('disabling SMS needs elevation; SMS can be the elevation method', async () => {
    const user = await userWithTotp()
    const phone = await addPhone(user)
    await api('POST', '/users/@me/mfa/sms/enable', { token: user.token, body: { password: user.password } })
    const first = await api('POST', '/users/@me/mfa/sms/disable', {
      token: user.token,
      body: { password: user.password },
    })
    expect(first.status).toBe(401)
    expect(first.body.mfa.methods.map((m: any) => m.type)).toEqual(['totp', 'sms', 'backup'])
    await api('POST', '/auth/mfa/sms/send', { body: { ticket: first.body.mfa.ticket } })
    const finish = await api('POST', '/mfa/finish', {
      token: user.token,
      body: { ticket: first.body.mfa.ticket, mfa_type: 'sms', data: await lastSmsCode(phone) },
    })
    expect(finish.status).toBe(200)
    const retry = await api('POST', '/users/@me/mfa/sms/disable', {
      token: user.token,
      body: { password: user.password },
      headers: { 'x-discord-mfa-authorization': finish.body.token },
    })
    expect(retry.status).toBe(204)
    expect((await mfaTicket(user)).sms).toBe(false)
  })
})

describe('elevation', () => {
  test('60003 body: ticket, methods with backup_codes_allowed; password only without other MFA', async () => {
    const user = await userWithTotp()
    const r = await api('POST', '/users/@me/mfa/codes-verification', { token: user.token, body: { regenerate: false } })
    expect(r.status).toBe(401)
    expect(r.body).toEqual({
      message: 'Two factor is required for this operation',
      code: 60003,
      mfa: { ticket: expect.any(String), methods: [{ type: 'totp', backup_codes_allowed: true }, { type: 'backup' }] },
    })
    const wrongPassword = await api('POST', '/mfa/finish', {
      token: user.token,
      body: { ticket: r.body.mfa.ticket, mfa_type: 'password', data: user.password },
    })
    expect(wrongPassword.body.code).toBe(60008) // password is not a method for users with MFA
  })

  test('backup codes: view (masked, with consumed state) and regenerate, elevated by TOTP; the old codes die', async () => {
    const user = await userWithTotp()
    await api('POST', '/auth/mfa/backup', {
      body: { ticket: (await mfaTicket(user)).ticket, code: user.backupCodes[0] },
    })
    const view = await elevated(
      'POST',
      '/users/@me/mfa/codes-verification',
      user.token,
      { regenerate: false },
      'totp',
      () => totpCode(user.secret),
    )
    expect(view.retry.status).toBe(200)
    expect(view.retry.body.backup_codes).toHaveLength(10)
    expect(view.retry.body.backup_codes.filter((c: any) => c.consumed)).toHaveLength(1)
    const regen = await api('POST', '/users/@me/mfa/codes-verification', {
      token: user.token,
      body: { regenerate: true },
      headers: { 'x-service-mfa-authorization': view.jwt! },
    })
    expect(regen.body.backup_codes).toHaveLength(10)
    expect(regen.body.backup_codes.every((c: any) => /^[a-z0-9]{8}$/.test(c.code) && !c.consumed)).toBe(true)
    expect(
      (
        await api('POST', '/auth/mfa/backup', {
          body: { ticket: (await mfaTicket(user)).ticket, code: user.backupCodes[1] },
        })
      ).body.code,
    ).toBe(60008)
    expect(
      (
        await api('POST', '/auth/mfa/backup', {
          body: { ticket: (await mfaTicket(user)).ticket, code: regen.body.backup_codes[0].code },
        })
      ).status,
    ).toBe(200)
  })

  test('the JWT: 5 minutes, this session only, cookie attributes; a backup code also elevates through totp', async () => {
    const user = await userWithTotp()
    const { finish, jwt } = await elevated(
      'POST',
      '/users/@me/mfa/codes-verification',
      user.token,
      {},
      'totp',
      () => user.backupCodes[0],
    )
    expect(finish!.status).toBe(200)
    const cookie = finish!.headers.get('set-cookie')!
    expect(cookie).toContain(`__Secure-recent_mfa=${jwt}`)
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/Secure/i)
    expect(cookie).toMatch(/SameSite=Strict/i)
    expect(cookie).toMatch(/Max-Age=300/i)
    const call = (headers: Record<string, string>, token = user.token) =>
      api('POST', '/users/@me/mfa/codes-verification', { token, body: {}, headers })
    expect((await call({ cookie: `__Secure-recent_mfa=${jwt}` })).status).toBe(200)
    // 300 s from its issue (whole seconds): good until then, measured from the JWT's own times so that the real
    // seconds the requests above took under load do not count.
    const { iat, exp } = JSON.parse(Buffer.from(jwt!.split('.')[1], 'base64url').toString()) as Record<string, number>
    expect(exp - iat).toBe(300)
    clock.advance(exp * 1000 - clock.now() - 1500)
    expect((await call({ 'x-service-mfa-authorization': jwt! })).status).toBe(200)
    clock.advance(3_000)
    expect((await call({ 'x-service-mfa-authorization': jwt! })).body.code).toBe(60003)
    clock.reset()
    // Another session of the same user cannot use it.
    const second = (
      await api('POST', '/auth/mfa/totp', {
        body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(user.secret) },
      })
    ).body.token
    expect((await call({ 'x-service-mfa-authorization': jwt! }, second)).body.code).toBe(60003)
    // A forged or tampered token fails.
    expect((await call({ 'x-service-mfa-authorization': `${jwt!.slice(0, -4)}AAAA` })).body.code).toBe(60003)
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${jwt!.split('.')[1]}.`
    expect((await call({ 'x-service-mfa-authorization': none })).body.code).toBe(60003)
    // The JWT is not a session token.
    expect((await api('GET', '/users/@me', { token: jwt! })).status).toBe(401)
  })

  test('without MFA the password elevates; 20 parallel finishes of one ticket → one JWT', async () => {
    const user = await makeUser()
    const first = await api('POST', '/auth/sessions/logout', { token: user.token, body: { session_id_hashes: ['x'] } })
    expect(first.body.mfa.methods).toEqual([{ type: 'password' }])
    const wrong = await api('POST', '/mfa/finish', {
      token: user.token,
      body: { ticket: first.body.mfa.ticket, mfa_type: 'password', data: 'not the password' },
    })
    expect(wrong.body).toEqual({ message: 'Password does not match', code: 60008 })
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/mfa/finish', {
          token: user.token,
          body: { ticket: first.body.mfa.ticket, mfa_type: 'password', data: user.password },
        }),
      ),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    const expired = await api('POST', '/auth/sessions/logout', {
      token: user.token,
      body: { session_id_hashes: ['x'] },
    })
    clock.advance(5 * 60_000 + 1000)
    expect(
      (
        await api('POST', '/mfa/finish', {
          token: user.token,
          body: { ticket: expired.body.mfa.ticket, mfa_type: 'password', data: user.password },
        })
      ).body.code,
    ).toBe(60006)
  })

  test('an elevation ticket belongs to its session', async () => {
    const user = await userWithTotp()
    const r = await api('POST', '/users/@me/mfa/codes-verification', { token: user.token, body: {} })
    const second = (
      await api('POST', '/auth/mfa/totp', {
        body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(user.secret) },
      })
    ).body.token
    clock.advance(30_000)
    const stolen = await api('POST', '/mfa/finish', {
      token: second,
      body: { ticket: r.body.mfa.ticket, mfa_type: 'totp', data: totpCode(user.secret) },
    })
    expect(stolen.body.code).toBe(60006)
  })

  test('TOTP disable: elevated; returns a new token; backup codes go with the last factor', async () => {
    const user = await userWithTotp()
    const { first, retry } = await elevated('POST', '/users/@me/mfa/totp/disable', user.token, undefined, 'totp', () =>
      totpCode(user.secret),
    )
    expect(first.body.code).toBe(60003)
    expect(retry.status).toBe(200)
    expect(typeof retry.body.token).toBe('string')
    expect((await api('GET', '/users/@me', { token: retry.body.token })).body.mfa_enabled).toBe(false)
    const login = await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
    expect(login.body.token).toBeDefined()
    expect((await api('POST', '/users/@me/mfa/totp/disable', { token: retry.body.token })).body.code).toBe(60002)
  })
})
