import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { clock } from '../../src/core/clock'
import { db } from '../../src/db/client'
import { CODE_ALREADY_USED } from '../../src/mfa/errors'
import { backupCodes, totpSecrets } from '../../src/mfa/tables'
import { GatewayClient } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { elevated, mfaTicket, newSecret, totpCode, userWithTotp } from './helpers'

afterEach(resetWorld)

describe('TOTP enrolment', () => {
  test('password, a 160-bit secret and a right code → a new token and 10 backup codes; the old token dies', async () => {
    const user = await makeUser()
    const other = (await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })).body
      .token
    const { client } = await GatewayClient.identified(user.token)
    const secret = newSecret()
    const enable = (body: Record<string, unknown>) =>
      api('POST', '/users/@me/mfa/totp/enable', {
        token: user.token,
        body: { secret, code: totpCode(secret), password: user.password, ...body },
      })

    const wrongPassword = await enable({ password: 'not my password' })
    expect(wrongPassword.status).toBe(400)
    expect(wrongPassword.body.errors.password._errors[0].code).toBe('PASSWORD_DOES_NOT_MATCH')
    const shortSecret = newSecret(10)
    expect((await enable({ secret: shortSecret, code: totpCode(shortSecret) })).body.code).toBe(60005)
    expect((await enable({ secret: 'not base32!' })).body.code).toBe(60005)
    const wrongCode = await enable({ code: totpCode(secret, 5) })
    expect(wrongCode.status).toBe(400)
    expect(wrongCode.body.code).toBe(60008)

    const r = await enable({})
    expect(r.status).toBe(200)
    expect(r.body.backup_codes).toHaveLength(10)
    for (const c of r.body.backup_codes)
      expect(c).toEqual({ user_id: user.id, code: expect.stringMatching(/^[a-z0-9]{8}$/), consumed: false })
    expect((await api('GET', '/users/@me', { token: user.token })).status).toBe(401)
    expect((await api('GET', '/users/@me', { token: other })).status).toBe(401)
    const me = await api('GET', '/users/@me', { token: r.body.token })
    expect(me.body.mfa_enabled).toBe(true)
    // The connection follows the new session instead of closing.
    const change = await client.waitFor('AUTH_SESSION_CHANGE')
    const sessions = await api('GET', '/auth/sessions', { token: r.body.token })
    expect(sessions.body.user_sessions.map((s: any) => s.id_hash)).toEqual([change.d.auth_session_id_hash])
    // Stored: the secret for verification, backup codes only as argon2id hashes.
    expect((await db().select().from(totpSecrets).where(eq(totpSecrets.userId, user.id)).get())!.secret).toBe(secret)
    const stored = await db().select().from(backupCodes).where(eq(backupCodes.userId, user.id)).all()
    expect(stored.every((s) => s.codeHash.startsWith('$argon2id$'))).toBe(true)
    expect(stored.some((s) => r.body.backup_codes.some((c: any) => s.codeHash.includes(c.code)))).toBe(false)

    clock.advance(30_000)
    const again = await api('POST', '/users/@me/mfa/totp/enable', {
      token: r.body.token,
      body: { secret, code: totpCode(secret), password: user.password },
    })
    expect(again.body.code).toBe(60001)
    client.close()
  })
})

describe('TOTP at login', () => {
  test('login answers the MFA shape without a token; the right code finishes it', async () => {
    const user = await userWithTotp()
    const body = await mfaTicket(user)
    expect(body).toEqual({
      user_id: user.id,
      mfa: true,
      ticket: expect.any(String),
      totp: true,
      sms: false,
      backup: true,
      webauthn: null,
    })
    expect(body.token).toBeUndefined()
    const r = await api('POST', '/auth/mfa/totp', { body: { ticket: body.ticket, code: totpCode(user.secret) } })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ token: expect.any(String), user_settings: { locale: 'en-US', theme: 'dark' } })
    expect((await api('GET', '/users/@me', { token: r.body.token })).body.id).toBe(user.id)
  })

  test('a step once used is refused again, saying so; ±1 step is accepted', async () => {
    const user = await userWithTotp()
    const code = totpCode(user.secret)
    expect(
      (await api('POST', '/auth/mfa/totp', { body: { ticket: (await mfaTicket(user)).ticket, code } })).status,
    ).toBe(200)
    const replay = await api('POST', '/auth/mfa/totp', { body: { ticket: (await mfaTicket(user)).ticket, code } })
    expect(replay.status).toBe(400)
    expect(replay.body).toEqual({ message: CODE_ALREADY_USED, code: 60008 })
    // A code that was never right still reads as invalid.
    const wrong = await api('POST', '/auth/mfa/totp', {
      body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(user.secret, 10) },
    })
    expect(wrong.body).toEqual({ message: 'Invalid two-factor code', code: 60008 })
    expect(
      (
        await api('POST', '/auth/mfa/totp', {
          body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(user.secret, 1) },
        })
      ).status,
    ).toBe(200)
    // Two steps ahead is outside the window.
    expect(
      (
        await api('POST', '/auth/mfa/totp', {
          body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(user.secret, 3) },
        })
      ).status,
    ).toBe(400)

    const late = await userWithTotp()
    clock.advance(60_000)
    // A code one step behind is at the window's edge: start a fresh step, so that the real clock cannot move the
    // server on to the next one between making the code and checking it (it did once in CI, under load).
    clock.advance(30_000 - (clock.now() % 30_000) + 100)
    expect(
      (
        await api('POST', '/auth/mfa/totp', {
          body: { ticket: (await mfaTicket(late)).ticket, code: totpCode(late.secret, -1) },
        })
      ).status,
    ).toBe(200)
  })

  test('a used code says so when it elevates too (/mfa/finish)', async () => {
    const user = await userWithTotp()
    const code = totpCode(user.secret)
    const first = await elevated(
      'POST',
      '/users/@me/mfa/codes-verification',
      user.token,
      { regenerate: false },
      'totp',
      () => code,
    )
    expect(first.retry.status).toBe(200)
    const again = await api('POST', '/users/@me/mfa/codes-verification', {
      token: user.token,
      body: { regenerate: true },
    })
    expect(again.body.code).toBe(60003)
    const finish = await api('POST', '/mfa/finish', {
      token: user.token,
      body: { ticket: again.body.mfa.ticket, mfa_type: 'totp', data: code },
    })
    expect(finish.status).toBe(400)
    expect(finish.body).toEqual({ message: CODE_ALREADY_USED, code: 60008 })
  })

  test('20 parallel requests with one code: exactly one token', async () => {
    const user = await userWithTotp()
    const tickets = await ticketsFor(user, 20)
    const code = totpCode(user.secret)
    const results = await Promise.all(
      tickets.map((t) => api('POST', '/auth/mfa/totp', { body: { ticket: t.ticket, code } })),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    expect(results.filter((r) => r.body.code === 60008)).toHaveLength(19)
    expect(results.filter((r) => r.body.message === CODE_ALREADY_USED)).toHaveLength(19)
  })

  test('a ticket dies after 5 wrong codes and after 10 minutes; it is single use', async () => {
    const user = await userWithTotp()
    const { ticket } = await mfaTicket(user)
    const wrong = totpCode(user.secret, 10)
    for (let i = 0; i < 5; i++)
      expect((await api('POST', '/auth/mfa/totp', { body: { ticket, code: wrong } })).body.code).toBe(60008)
    const dead = await api('POST', '/auth/mfa/totp', { body: { ticket, code: totpCode(user.secret) } })
    expect(dead.status).toBe(400)
    expect(dead.body.code).toBe(60006)

    const old = (await mfaTicket(user)).ticket
    clock.advance(10 * 60_000 + 1000)
    expect(
      (await api('POST', '/auth/mfa/totp', { body: { ticket: old, code: totpCode(user.secret) } })).body.code,
    ).toBe(60006)

    const once = (await mfaTicket(user)).ticket
    expect((await api('POST', '/auth/mfa/totp', { body: { ticket: once, code: totpCode(user.secret) } })).status).toBe(
      200,
    )
    clock.advance(30_000)
    expect(
      (await api('POST', '/auth/mfa/totp', { body: { ticket: once, code: totpCode(user.secret) } })).body.code,
    ).toBe(60006)
    expect((await api('POST', '/auth/mfa/totp', { body: { ticket: 'made-up', code: '123456' } })).body.code).toBe(60006)
  })

  test('wrong codes across tickets are limited per user: 429 with retry_after', async () => {
    const user = await userWithTotp()
    let last
    for (let i = 0; i < 21; i++)
      last = await api('POST', '/auth/mfa/totp', { body: { ticket: (await mfaTicket(user)).ticket, code: '000000' } })
    expect(last!.status).toBe(429)
    expect(last!.body.retry_after).toBeGreaterThan(0)
  })

  test('backup codes: through /auth/mfa/backup and /auth/mfa/totp, each once; 20 parallel uses → one', async () => {
    const user = await userWithTotp()
    const [a, b, c] = user.backupCodes
    expect(
      (await api('POST', '/auth/mfa/backup', { body: { ticket: (await mfaTicket(user)).ticket, code: a } })).status,
    ).toBe(200)
    expect(
      (await api('POST', '/auth/mfa/backup', { body: { ticket: (await mfaTicket(user)).ticket, code: a } })).body.code,
    ).toBe(60008)
    expect(
      (
        await api('POST', '/auth/mfa/totp', {
          body: { ticket: (await mfaTicket(user)).ticket, code: `${b.slice(0, 4)}-${b.slice(4)}` },
        })
      ).status,
    ).toBe(200)
    const tickets = await ticketsFor(user, 20)
    const results = await Promise.all(
      tickets.map((t) => api('POST', '/auth/mfa/backup', { body: { ticket: t.ticket, code: c } })),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
  })

  test('required_actions survive the second factor', async () => {
    const user = await makeUser({ password: 'password123' })
    const secret = newSecret()
    await api('POST', '/users/@me/mfa/totp/enable', {
      token: user.token,
      body: { secret, code: totpCode(secret), password: user.password },
    })
    clock.advance(30_000)
    const r = await api('POST', '/auth/mfa/totp', {
      body: { ticket: (await mfaTicket(user)).ticket, code: totpCode(secret) },
    })
    expect(r.body.required_actions).toEqual(['update_password'])
  })

  test('unknown method → 404; validation → 50035', async () => {
    const user = await userWithTotp()
    const { ticket } = await mfaTicket(user)
    expect((await api('POST', '/auth/mfa/password', { body: { ticket, code: user.password } })).status).toBe(404)
    expect((await api('POST', '/auth/mfa/totp', { body: { code: '123456' } })).body.code).toBe(50035)
  })
})

/** Logins one after another: parallel logins of one account are limited while in flight (tests/security). */
async function ticketsFor(user: { email: string; password: string }, n: number) {
  const out = []
  for (let i = 0; i < n; i++) out.push(await mfaTicket(user))
  return out
}
