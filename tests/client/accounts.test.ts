// suite: one pass
// The SDK's accounts module against a real server process, as a game runs it: login with each factor (TOTP, SMS
// texted through the server's SMS webhook, a backup code, a security key), passkey login, MFA elevation answered
// through onMfaRequired once, registration with the consent rule, forgot/reset (with its MFA step, the link read
// from the server's outbox), sessions, handoff, logout, and bad input as one ApiError with its field errors.
import { afterAll, describe, expect, test } from 'bun:test'
import { ApiError, Client, type MfaStep } from '../../client/src/index'
import { SoftAuthenticator, uniquePhone } from '../mfa/helpers'
import { mailedToken, registeredUser, userWithTotp } from './accounts-helpers'
import { startServer } from './server'

// The server texts through this webhook (SMS_WEBHOOK_URL): the test reads the codes as a phone would.
const texts: { to: string; body: string }[] = []
const sms = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(req) {
    texts.push((await req.json()) as { to: string; body: string })
    return new Response(null, { status: 204 })
  },
})
afterAll(() => sms.stop(true))
const ORIGIN = 'http://localhost'
const server = await startServer({
  SMS_WEBHOOK_URL: `http://127.0.0.1:${sms.port}/sms`,
  WEBAUTHN_RP_ID: 'localhost',
  WEBAUTHN_ORIGINS: ORIGIN,
})
const client = (options: ConstructorParameters<typeof Client>[0] = {}) =>
  new Client({ baseUrl: server.url, ...options })

/** The code of the last text to `phone` (the webhook is called just after the answer: waited for). */
async function textedCode(phone: string, after = 0): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const text = texts.slice(after).findLast((t) => t.to === phone)
    const code = text && /(\d{6})/.exec(text.body)?.[1]
    if (code) return code
    await Bun.sleep(10)
  }
  throw new Error(`no text to ${phone}`)
}

describe('login', () => {
  test('without MFA: the session, its token the client’s; a wrong password: 50035 on both fields', async () => {
    const user = await registeredUser(server)
    const c = client()
    const step = await c.auth.login({ login: user.email, password: user.password })
    expect(step.mfa).toBeUndefined()
    expect(step).toEqual({ token: expect.any(String), userId: user.id })
    expect(c.token).toBe(step.token!)
    expect((await c.rest.get('/users/@me')).id).toBe(user.id)

    const wrong = await client()
      .auth.login({ login: user.email, password: 'not the password' })
      .catch((e) => e)
    expect(wrong).toBeInstanceOf(ApiError)
    expect(wrong).toMatchObject({ status: 400, code: 50035 })
    expect(wrong.fieldErrors()).toEqual({
      login: ['Login or password is invalid.'],
      password: ['Login or password is invalid.'],
    })
    const blank = await client()
      .auth.login({ login: ' ', password: user.password })
      .catch((e) => e)
    expect(blank).toMatchObject({ status: 400, code: 50035 })
    expect(Object.keys(blank.fieldErrors())).toEqual(['login'])
  })

  test('TOTP: the step offers exactly totp and backup; a wrong code is 60008, the step stays usable; a backup code once', async () => {
    const user = await userWithTotp(server)
    const c = client()
    const step = await c.auth.login({ login: user.email, password: user.password })
    expect(step.token).toBeUndefined()
    expect(c.token).toBeUndefined()
    const mfa = step.mfa!
    expect(mfa.types).toEqual(['totp', 'backup'])
    expect(mfa.userId).toBe(user.id)
    expect(await mfa.verify('sms', '123456').catch((e) => e)).toBeInstanceOf(TypeError)
    expect(await mfa.verify('totp', '000000').catch((e) => e)).toMatchObject({ status: 400, code: 60008 })
    const session = await mfa.verify('totp', user.next())
    expect(session).toEqual({ token: expect.any(String), userId: user.id })
    expect(c.token).toBe(session.token)
    expect((await c.rest.get('/users/@me')).id).toBe(user.id)

    // A backup code is a method of its own, and works once.
    const backup = (await client().auth.login({ login: user.email, password: user.password })).mfa!
    expect((await backup.verify('backup', user.backupCodes[0])).userId).toBe(user.id)
    const again = (await client().auth.login({ login: user.email, password: user.password })).mfa!
    expect(await again.verify('backup', user.backupCodes[0]).catch((e) => e)).toMatchObject({ code: 60008 })
  })

  test('SMS: offered once it is on; sendSms() texts the code, verify takes it', async () => {
    const user = await userWithTotp(server)
    const c = client({ token: user.token })
    const phone = uniquePhone()
    await c.rest.post('/users/@me/phone', { body: { phone } })
    const phoneToken = await c.auth.verifyPhone(phone, await textedCode(phone))
    await c.rest.post('/users/@me/phone', { body: { phone_token: phoneToken, password: user.password } })
    await c.rest.post('/users/@me/mfa/sms/enable', { body: { password: user.password } })

    const login = client()
    const mfa = (await login.auth.login({ login: user.email, password: user.password })).mfa!
    expect(mfa.types).toEqual(['totp', 'sms', 'backup'])
    const before = texts.length
    const masked = await mfa.sendSms()
    expect(masked).not.toContain(phone.slice(-6, -2))
    const session = await mfa.verify('sms', await textedCode(phone, before))
    expect(session.userId).toBe(user.id)
    expect(login.token).toBe(session.token)
  })

  test('a security key: the step carries its challenge; the assertion, or the client’s authenticator, proves it', async () => {
    const user = await registeredUser(server)
    const key = new SoftAuthenticator(ORIGIN, 'localhost')
    const owner = client({ token: user.token })
    const start = await owner.rest.request('POST', '/users/@me/mfa/webauthn/credentials')
    await owner.rest.request('POST', '/users/@me/mfa/webauthn/credentials', {
      body: { ticket: start.ticket, name: 'Key', credential: key.register(start.challenge) },
    })

    const c = client()
    const mfa = (await c.auth.login({ login: user.email, password: user.password })).mfa!
    expect(mfa.types).toEqual(['webauthn', 'backup'])
    expect(JSON.parse(mfa.webauthnChallenge!).publicKey.challenge).toEqual(expect.any(String))
    expect((await mfa.verify('webauthn', key.assert(mfa.webauthnChallenge!))).userId).toBe(user.id)

    // No assertion given: the client's authenticator signs (navigator.credentials in a browser).
    const d = client()
    d.auth.authenticator = async (options) => key.assert(options)
    const again = (await d.auth.login({ login: user.email, password: user.password })).mfa!
    expect((await again.verify('webauthn')).userId).toBe(user.id)

    // A passkey alone logs in (the discoverable credential names the user).
    const e = client()
    const passkey = await e.auth.loginWithPasskey({ sign: (challenge) => key.assert(challenge) })
    expect(passkey.userId).toBe(user.id)
    expect((await e.rest.get('/users/@me')).id).toBe(user.id)
  })
})

describe('elevation (60003)', () => {
  test('asks onMfaRequired once with the methods offered, proves its code, repeats the call once', async () => {
    const user = await userWithTotp(server)
    const asked: string[][] = []
    const c = client({
      token: user.token,
      onMfaRequired: (mfa: MfaStep<string>) => (asked.push(mfa.types), { method: 'totp', code: user.next() }),
    })
    // The backup codes are shown elevated only: one 60003, one proof, one repeat.
    const { backup_codes } = await c.rest.post('/users/@me/mfa/codes-verification', { body: { regenerate: false } })
    expect(asked).toEqual([['totp', 'backup']])
    expect(backup_codes.length).toBe(user.backupCodes.length)
  })

  test('a handler that gives up, or proves a wrong code: the error, no loop', async () => {
    const user = await registeredUser(server)
    let asked = 0
    const giveUp = client({ token: user.token, onMfaRequired: () => (asked++, null) })
    const refused = await giveUp.auth.logoutSessions(['x'.repeat(44)]).catch((e) => e)
    expect(refused).toMatchObject({ status: 401, code: 60003 })
    expect(refused.mfa.methods).toEqual([{ type: 'password' }])
    const wrong = client({ token: user.token, onMfaRequired: () => (asked++, { method: 'password', code: 'nope' }) })
    expect(await wrong.auth.logoutSessions(['x'.repeat(44)]).catch((e) => e)).toMatchObject({ status: 400 })
    expect(asked).toBe(2)
  })
})

describe('sessions, logout, handoff', () => {
  test('sessions() marks this one; logoutOtherSessions() ends the rest (elevated by the password)', async () => {
    const user = await registeredUser(server)
    const phone = client()
    await phone.auth.login({ login: user.email, password: user.password })
    const c = client({ token: user.token, onMfaRequired: () => ({ method: 'password', code: user.password }) })
    const list = await c.auth.sessions()
    expect(list.length).toBe(2)
    expect(list.filter((s) => s.current).length).toBe(1)
    expect(list[0].lastUsed).toBeInstanceOf(Date)
    expect(await c.auth.logoutOtherSessions()).toBe(1)
    expect(await phone.rest.get('/users/@me').catch((e) => e)).toMatchObject({ status: 401 })
    expect((await c.auth.sessions()).map((s) => s.current)).toEqual([true])
  })

  test('logout ends the session and forgets the token', async () => {
    const user = await registeredUser(server)
    const c = client()
    const { token } = await c.auth.login({ login: user.email, password: user.password })
    await c.auth.logout()
    expect(c.token).toBeUndefined()
    expect(
      await client({ token })
        .rest.get('/users/@me')
        .catch((e) => e),
    ).toMatchObject({ status: 401 })
  })

  test('handoff: a key, a token for it, a session of its own; the token once', async () => {
    const user = await registeredUser(server)
    const game = client()
    const key = game.auth.newHandoffKey()
    const handoff = await client({ token: user.token }).auth.createHandoff(key)
    const session = await game.auth.exchangeHandoff(key, handoff)
    expect(session.userId).toBe(user.id)
    expect(session.token).not.toBe(user.token)
    expect((await game.rest.get('/users/@me')).id).toBe(user.id)
    expect(
      await client()
        .auth.exchangeHandoff(key, handoff)
        .catch((e) => e),
    ).toBeInstanceOf(ApiError)
  })
})

describe('registration', () => {
  test('consent where the location rules ask for it (loopback: unknown country), then a session', async () => {
    const c = client()
    const rules = await c.auth.locationMetadata()
    expect(rules.consentRequired).toBe(true)
    expect(rules.promotionalEmailOptIn).toEqual({ required: true, preChecked: false })
    const email = `sdk-register-${Date.now()}@example.test`
    const options = {
      email,
      password: 'an sdk test passphrase',
      username: `sdk_${Date.now()}`,
      dateOfBirth: '1990-01-02',
    }
    const refused = await c.auth.register(options).catch((e) => e)
    expect(refused).toMatchObject({ status: 400, code: 50035 })
    expect(Object.keys(refused.fieldErrors())).toEqual(['consent'])
    expect(c.token).toBeUndefined()
    const session = await c.auth.register({ ...options, consent: true })
    expect((await c.rest.get('/users/@me')).id).toBe(session.userId)
    // The verification link logs in too.
    const verified = await client().auth.verifyEmail(mailedToken(server, email, 'verify'))
    expect(verified.userId).toBe(session.userId)
  })
})

describe('forgot / reset', () => {
  test('the mailed link sets a new password and logs in; the old password and the link stop working', async () => {
    const user = await registeredUser(server)
    const c = client()
    expect(await c.auth.forgot(user.email)).toEqual({ via: 'email' })
    const token = mailedToken(server, user.email, 'reset')
    expect(await c.auth.checkResetToken(token)).toBe(true)
    const step = await c.auth.reset({ token, password: 'a brand new sdk passphrase' })
    expect(step).toEqual({ token: expect.any(String), userId: user.id })
    expect(c.token).toBe(step.token!)
    expect(await c.auth.checkResetToken(token)).toBe(false)
    expect(
      await client()
        .auth.login({ login: user.email, password: user.password })
        .catch((e) => e),
    ).toMatchObject({
      code: 50035,
    })
    expect((await client().auth.login({ login: user.email, password: 'a brand new sdk passphrase' })).userId).toBe(
      user.id,
    )
  })

  test('with MFA: the reset answers a step, its verify finishes the reset', async () => {
    const user = await userWithTotp(server)
    const c = client()
    await c.auth.forgot(user.email)
    const step = await c.auth.reset({
      token: mailedToken(server, user.email, 'reset'),
      password: 'another sdk passphrase',
    })
    expect(step.mfa!.types).toEqual(['totp', 'backup'])
    expect(c.token).toBeUndefined()
    const session = await step.mfa!.verify('totp', user.next())
    expect(session.userId).toBe(user.id)
    expect((await c.rest.get('/users/@me')).id).toBe(user.id)
  })

  test('a phone that is not an E.164 number: 50035 on login', async () => {
    const error = await client()
      .auth.forgot('+12')
      .catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 400, code: 50035 })
    expect(Object.keys(error.fieldErrors())).toEqual(['login'])
  })
})
