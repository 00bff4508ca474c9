import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { db } from '../../src/db/client'
import { webauthnCredentials } from '../../src/mfa/tables'
import { api, makeUser, resetWorld } from '../helpers'
import { elevated, mfaTicket, SoftAuthenticator, userWithKey } from './helpers'

afterEach(resetWorld)

describe('security key enrolment', () => {
  test('no body → ticket and registration options; finishing stores the key and turns MFA on', async () => {
    const user = await makeUser()
    const start = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: user.token })
    expect(start.status).toBe(200)
    const { publicKey } = JSON.parse(start.body.challenge)
    expect(publicKey.challenge.length).toBeGreaterThanOrEqual(43) // 32 random bytes
    expect(publicKey.user.name).toBe(user.username)
    const key = new SoftAuthenticator()
    const r = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: { ticket: start.body.ticket, name: 'Yubi', credential: key.register(start.body.challenge) },
    })
    expect(r.status).toBe(200)
    expect(r.body.id).toMatch(/^\d+$/)
    expect(r.body).toMatchObject({ name: 'Yubi', type: 1 })
    expect(r.body.backup_codes).toHaveLength(10)
    expect((await api('GET', '/users/@me', { token: user.token })).body.mfa_enabled).toBe(true)
    const list = await api('GET', '/users/@me/mfa/webauthn/credentials', { token: user.token })
    expect(list.body).toEqual([{ id: r.body.id, name: 'Yubi', type: 1 }])
    // The ticket is used up.
    const again = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: {
        ticket: start.body.ticket,
        name: 'Again',
        credential: new SoftAuthenticator().register(start.body.challenge),
      },
    })
    expect(again.body.code).toBe(60006)
  })

  test("a response to another challenge, from another origin, or another user's ticket is refused", async () => {
    const user = await makeUser()
    const other = await makeUser()
    const start = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: user.token })
    const otherStart = await api('POST', '/users/@me/mfa/webauthn/credentials', { token: other.token })
    const key = new SoftAuthenticator()
    const wrongChallenge = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: { ticket: start.body.ticket, name: 'k', credential: key.register(otherStart.body.challenge) },
    })
    expect(wrongChallenge.body.code).toBe(60008)
    const wrongOrigin = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: {
        ticket: start.body.ticket,
        name: 'k',
        credential: key.register(start.body.challenge, { origin: 'https://evil.example' }),
      },
    })
    expect(wrongOrigin.body.code).toBe(60008)
    const foreignTicket = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: { ticket: otherStart.body.ticket, name: 'k', credential: key.register(otherStart.body.challenge) },
    })
    expect(foreignTicket.body.code).toBe(60006)
    const wrongRp = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: {
        ticket: start.body.ticket,
        name: 'k',
        credential: new SoftAuthenticator(undefined, 'evil.example').register(start.body.challenge),
      },
    })
    expect(wrongRp.body.code).toBe(60008)
    const badName = await api('POST', '/users/@me/mfa/webauthn/credentials', {
      token: user.token,
      body: { ticket: start.body.ticket, name: 'x'.repeat(33), credential: key.register(start.body.challenge) },
    })
    expect(badName.body.code).toBe(50035)
    expect(
      await db().select().from(webauthnCredentials).where(eq(webauthnCredentials.userId, user.id)).all(),
    ).toHaveLength(0)
  })

  test('rename; remove needs elevation by the key itself', async () => {
    const user = await userWithKey()
    const renamed = await api('PATCH', `/users/@me/mfa/webauthn/credentials/${user.credential.id}`, {
      token: user.token,
      body: { name: 'Renamed' },
    })
    expect(renamed.body).toEqual({ id: user.credential.id, name: 'Renamed', type: 1 })
    expect(
      (await api('PATCH', '/users/@me/mfa/webauthn/credentials/123', { token: user.token, body: { name: 'x' } }))
        .status,
    ).toBe(404)
    const stranger = await makeUser()
    expect(
      (
        await api('PATCH', `/users/@me/mfa/webauthn/credentials/${user.credential.id}`, {
          token: stranger.token,
          body: { name: 'mine' },
        })
      ).status,
    ).toBe(404)

    const { first, finish, retry } = await elevated(
      'DELETE',
      `/users/@me/mfa/webauthn/credentials/${user.credential.id}`,
      user.token,
      undefined,
      'webauthn',
      (mfa) => user.key.assert(mfa.methods.find((m: any) => m.type === 'webauthn').challenge),
    )
    expect(first.status).toBe(401)
    expect(first.body.mfa.methods.map((m: any) => m.type)).toEqual(['webauthn', 'backup'])
    expect(finish!.status).toBe(200)
    expect(retry.status).toBe(204)
    expect((await api('GET', '/users/@me', { token: user.token })).body.mfa_enabled).toBe(false)
  })
})

describe('security key at login', () => {
  test('login carries the challenge; a signed assertion finishes it; replays and stale counters fail', async () => {
    const user = await userWithKey()
    const body = await mfaTicket(user)
    const options = JSON.parse(body.webauthn).publicKey
    expect(body).toMatchObject({ mfa: true, totp: false, sms: false, backup: true })
    expect(options.allowCredentials.map((c: any) => c.id)).toEqual([
      Buffer.from(user.key.credentialId).toString('base64url'),
    ])
    const assertion = user.key.assert(body.webauthn)
    const r = await api('POST', '/auth/mfa/webauthn', { body: { ticket: body.ticket, code: assertion } })
    expect(r.status).toBe(200)
    expect(typeof r.body.token).toBe('string')

    // The same assertion on a new ticket: the challenge is not the one issued.
    const second = await mfaTicket(user)
    expect(
      (await api('POST', '/auth/mfa/webauthn', { body: { ticket: second.ticket, code: assertion } })).body.code,
    ).toBe(60008)
    // A counter that does not move forward (cloned key).
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: second.ticket, code: user.key.assert(second.webauthn, { counterStep: 0 }) },
        })
      ).body.code,
    ).toBe(60008)
    // Not present, or from another origin.
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: second.ticket, code: user.key.assert(second.webauthn, { up: false }) },
        })
      ).body.code,
    ).toBe(60008)
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: second.ticket, code: user.key.assert(second.webauthn, { origin: 'https://evil.example' }) },
        })
      ).body.code,
    ).toBe(60008)
    expect(
      (await api('POST', '/auth/mfa/webauthn', { body: { ticket: second.ticket, code: 'not json' } })).body.code,
    ).toBe(60008)
    // Signed for another relying party.
    const third = await mfaTicket(user)
    ;(user.key as unknown as { rpId: string }).rpId = 'evil.example'
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: third.ticket, code: user.key.assert(third.webauthn) },
        })
      ).body.code,
    ).toBe(60008)
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: second.ticket, code: user.key.assert(second.webauthn) },
        })
      ).body.code,
    ).toBe(60006) // 5 wrong: dead
  })

  test("another user's key cannot answer", async () => {
    const user = await userWithKey()
    const other = await userWithKey()
    const body = await mfaTicket(user)
    expect(
      (
        await api('POST', '/auth/mfa/webauthn', {
          body: { ticket: body.ticket, code: other.key.assert(body.webauthn) },
        })
      ).body.code,
    ).toBe(60008)
  })
})

describe('passwordless (conditional UI)', () => {
  test("start → discoverable options with user verification required; finish → a session for the key's user", async () => {
    const user = await userWithKey()
    const start = await api('POST', '/auth/conditional/start')
    expect(start.status).toBe(200)
    const { publicKey } = JSON.parse(start.body.challenge)
    expect(publicKey.userVerification).toBe('required')
    expect(publicKey.allowCredentials ?? []).toEqual([])
    const r = await api('POST', '/auth/conditional/finish', {
      body: { ticket: start.body.ticket, credential: user.key.assert(start.body.challenge) },
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      user_id: user.id,
      token: expect.any(String),
      user_settings: { locale: 'en-US', theme: 'dark' },
    })
    // Single use.
    expect(
      (
        await api('POST', '/auth/conditional/finish', {
          body: { ticket: start.body.ticket, credential: user.key.assert(start.body.challenge) },
        })
      ).body.code,
    ).toBe(60006)
  })

  test('20 parallel finishes of one ticket: one session', async () => {
    const user = await userWithKey()
    const start = await api('POST', '/auth/conditional/start')
    const assertion = user.key.assert(start.body.challenge)
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/auth/conditional/finish', { body: { ticket: start.body.ticket, credential: assertion } }),
      ),
    )
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
  })

  test('without user verification, or an unknown key, it fails', async () => {
    const user = await userWithKey()
    const a = await api('POST', '/auth/conditional/start')
    expect(
      (
        await api('POST', '/auth/conditional/finish', {
          body: { ticket: a.body.ticket, credential: user.key.assert(a.body.challenge, { uv: false }) },
        })
      ).body.code,
    ).toBe(60008)
    const b = await api('POST', '/auth/conditional/start')
    expect(
      (
        await api('POST', '/auth/conditional/finish', {
          body: { ticket: b.body.ticket, credential: new SoftAuthenticator().assert(b.body.challenge) },
        })
      ).body.code,
    ).toBe(60008)
  })

  test('with a valid token, start returns that token', async () => {
    const user = await makeUser()
    const r = await api('POST', '/auth/conditional/start', { token: user.token })
    expect(r.body).toMatchObject({ user_id: user.id, token: user.token })
  })
})
