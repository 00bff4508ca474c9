// Remote (QR) login end to end: a test desktop (its own RSA) and a mobile user over REST; handshake tokens and tickets
// used twice, by others, after the desktop left, in parallel; MFA elevation; the operator lock; the limits.
import { updateUser } from '../../src/accounts/store'
import { afterEach, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { lockUser } from '../../src/auth/lock'
import { authSessions } from '../../src/accounts/tables'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { sha256Hex } from '../../src/core/crypto'
import { db } from '../../src/db/client'
import { remoteAuthStats, startRemoteAuthGateway } from '../../src/remote-auth/desktop'
import { LOGIN_REQUESTS, MOBILE_REQUESTS, TICKET_TTL_MS } from '../../src/remote-auth/limits'
import { withConfig } from '../auth/helpers'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { totpCode, userWithTotp } from '../mfa/helpers'
import { DesktopClient } from './desktop-client'
import { after, cancel, claim, desktopRow, finish, login, serverForgot, ticketRows } from './helpers'

const open: DesktopClient[] = []
async function desktop(form: 'nonce' | 'proof' = 'nonce', options: Parameters<typeof DesktopClient.ready>[1] = {}) {
  const c = await DesktopClient.ready(form, options)
  open.push(c)
  return c
}

afterEach(async () => {
  for (const c of open.splice(0)) c.close()
  await Bun.sleep(20)
  resetWorld()
})

const sessionsOf = async (userId: string) =>
  db().select().from(authSessions).where(eq(authSessions.userId, userId)).all()
const WINDOWS_CHROME =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36'

/** Claim and finish; the desktop's ticket. */
async function ticketFor(user: { token: string }, d: DesktopClient): Promise<string> {
  const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
  expect((await finish(user.token, handshake)).status).toBe(204)
  return (await d.waitFor('pending_login')).ticket
}

describe('the whole flow', () => {
  for (const form of ['nonce', 'proof'] as const) {
    test(`{${form}} proof: pending_ticket, pending_login, close 1000, a token for a new session with the desktop's client info`, async () => {
      await withConfig({ trustProxy: true }, async () => {
        const user = await makeUser()
        const { client: mobileGateway } = await GatewayClient.identified(user.token)
        const framesBefore = mobileGateway.frames.length
        const d = await desktop(form, {
          headers: {
            'x-forwarded-for': '81.2.69.160',
            'user-agent': WINDOWS_CHROME,
            origin: 'https://desktop.example',
          },
        })

        const created = await claim(user.token, d.fingerprint)
        expect(created.status).toBe(200)
        expect(Object.keys(created.body)).toEqual(['handshake_token'])
        expect(Buffer.from(created.body.handshake_token, 'base64url').length).toBeGreaterThanOrEqual(16)
        const ticketFrame = await d.waitFor('pending_ticket')
        expect(Object.keys(ticketFrame).sort()).toEqual(['encrypted_user_payload', 'op'])
        expect(d.decrypt(ticketFrame.encrypted_user_payload).toString()).toBe(`${user.id}:0:0:${user.username}`)
        // Stored hashed, bound to the user.
        const row = (await desktopRow(d.fingerprint))!
        expect(row.userId).toBe(user.id)
        expect(row.handshakeHash).toBe(sha256Hex(created.body.handshake_token))

        const done = await finish(user.token, created.body.handshake_token, { temporary_token: false })
        expect(done.status).toBe(204)
        expect(done.body).toBeNull()
        const pending = await d.waitFor('pending_login')
        expect(Object.keys(pending).sort()).toEqual(['op', 'ticket'])
        expect(await d.waitForClose()).toEqual({ code: 1000, reason: 'Normal closure' })
        expect(after(d)).toEqual(['pending_ticket', 'pending_login'])

        const sessionsBefore = (await sessionsOf(user.id)).length
        const exchanged = await login(pending.ticket)
        expect(exchanged.status).toBe(200)
        expect(Object.keys(exchanged.body)).toEqual(['encrypted_token'])
        const token = d.decrypt(exchanged.body.encrypted_token).toString()
        expect(token).not.toBe(user.token)
        expect(await sessionsOf(user.id)).toHaveLength(sessionsBefore + 1)

        const me = await api('GET', '/users/@me', { token })
        expect(me.status).toBe(200)
        expect(me.body.id).toBe(user.id)
        const { client: desktopGateway, ready } = await GatewayClient.identified(token)
        expect(ready.auth_session_id_hash).toEqual(expect.any(String))
        const listed = (await api('GET', '/auth/sessions', { token })).body.user_sessions
        const mine = listed.find((s: any) => s.id_hash === ready.auth_session_id_hash)
        expect(mine.client_info).toEqual({ os: 'Windows', platform: 'Chrome', location: 'United Kingdom' })
        const stored = (await sessionsOf(user.id)).find((s) => s.idHash === ready.auth_session_id_hash)!
        expect(stored.ip).toBe('81.2.69.160')

        // The scanning user's own connection saw nothing of it.
        await Bun.sleep(100)
        expect(mobileGateway.frames.slice(framesBefore).filter((f) => f.op === 0)).toEqual([])
        mobileGateway.close()
        desktopGateway.close()
      })
    })
  }

  test('the payload carries the avatar hash when there is one', async () => {
    const user = await makeUser()
    await updateUser(user.id, { avatar: 'a_0123456789abcdef0123456789abcdef' })
    const d = await desktop()
    expect((await claim(user.token, d.fingerprint)).status).toBe(200)
    expect(d.decrypt((await d.waitFor('pending_ticket')).encrypted_user_payload).toString()).toBe(
      `${user.id}:0:a_0123456789abcdef0123456789abcdef:${user.username}`,
    )
  })

  test('cancel: the desktop gets cancel and close 1000; the token is used up; no ticket', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    const tickets = (await ticketRows()).length
    const r = await cancel(user.token, handshake)
    expect(r.status).toBe(204)
    await d.waitFor('cancel')
    expect(d.frames.find((f) => f.op === 'cancel')).toEqual({ op: 'cancel' })
    expect(await d.waitForClose()).toEqual({ code: 1000, reason: 'Normal closure' })
    expect(after(d)).toEqual(['pending_ticket', 'cancel'])
    expect((await finish(user.token, handshake)).body.errors.handshake_token._errors[0].code).toBe(
      'REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN',
    )
    expect((await cancel(user.token, handshake)).status).toBe(400)
    expect(await ticketRows()).toHaveLength(tickets)
  })
})

describe('handshake tokens', () => {
  test('used twice: the second finish (or a cancel after it) fails; one ticket only', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    expect((await finish(user.token, handshake)).status).toBe(204)
    const again = await finish(user.token, handshake)
    expect(again.status).toBe(400)
    expect(again.body).toEqual({
      message: 'Invalid Form Body',
      code: 50035,
      errors: {
        handshake_token: {
          _errors: [{ code: 'REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN', message: 'Invalid or expired handshake token.' }],
        },
      },
    })
    expect((await cancel(user.token, handshake)).status).toBe(400)
    expect(d.ops().filter((op) => op === 'pending_login')).toHaveLength(1)
  })

  test('20 parallel finishes: one 204, one pending_login', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    const tickets = (await ticketRows()).length
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        api('POST', '/users/@me/remote-auth/finish', { token: user.token, body: { handshake_token: handshake } }),
      ),
    )
    // The per-user limit answers some with 429; of the rest exactly one wins.
    expect(results.filter((r) => r.status === 204)).toHaveLength(1)
    expect(results.every((r) => [204, 400, 429].includes(r.status))).toBe(true)
    await d.waitForClose()
    expect(d.ops().filter((op) => op === 'pending_login')).toHaveLength(1)
    expect(await ticketRows()).toHaveLength(tickets + 1)
  })

  test("another user's token: refused, the desktop hears nothing, and the owner can still finish", async () => {
    const owner = await makeUser()
    const other = await makeUser()
    const d = await desktop()
    const handshake = (await claim(owner.token, d.fingerprint)).body.handshake_token
    const stolenFinish = await finish(other.token, handshake)
    const stolenCancel = await cancel(other.token, handshake)
    for (const r of [stolenFinish, stolenCancel]) {
      expect(r.status).toBe(400)
      expect(r.body.errors.handshake_token._errors[0].code).toBe('REMOTE_AUTH_INVALID_HANDSHAKE_TOKEN')
    }
    await Bun.sleep(50)
    expect(after(d)).toEqual(['pending_ticket'])
    expect(await sessionsOf(other.id)).toHaveLength(1)
    expect((await finish(owner.token, handshake)).status).toBe(204)
    await d.waitFor('pending_login')
  })

  test('after the desktop left: dead', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    const sockets = remoteAuthStats().sockets
    d.close()
    await serverForgot(d, sockets)
    expect((await finish(user.token, handshake)).status).toBe(400)
    expect((await cancel(user.token, handshake)).status).toBe(400)
  })

  test('after the desktop timed out: dead', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    clock.advance(config().remoteAuthTimeoutMs)
    expect((await finish(user.token, handshake)).status).toBe(400)
    expect((await d.waitForClose()).code).toBe(4003)
  })

  test('garbage handshake tokens: form errors, never 5xx', async () => {
    const user = await makeUser()
    for (const handshake_token of ['', 'x', 'A'.repeat(128)])
      expect((await finish(user.token, handshake_token)).status).toBe(400)
    expect((await finish(user.token, 'A'.repeat(129))).body.code).toBe(50035)
    expect(
      (await api('POST', '/users/@me/remote-auth/finish', { token: user.token, body: {} })).body.errors.handshake_token,
    ).toBeDefined()
    expect((await api('POST', '/users/@me/remote-auth/finish', { token: user.token, raw: '{' })).body.code).toBe(50109)
  })

  test('temporary_token: true is refused (not supported) and leaves the handshake usable', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    const r = await finish(user.token, handshake, { temporary_token: true })
    expect(r.status).toBe(400)
    expect(r.body.errors.temporary_token._errors[0].code).toBe('REMOTE_AUTH_TEMPORARY_TOKEN_UNSUPPORTED')
    expect((await finish(user.token, handshake, { temporary_token: 'yes' })).status).toBe(400)
    await Bun.sleep(50)
    expect(after(d)).toEqual(['pending_ticket'])
    expect((await finish(user.token, handshake)).status).toBe(204)
  })
})

describe('fingerprints', () => {
  test('one mobile session per fingerprint: a second claim (same or another user) is refused', async () => {
    const first = await makeUser()
    const second = await makeUser()
    const d = await desktop()
    expect((await claim(first.token, d.fingerprint)).status).toBe(200)
    for (const user of [first, second]) {
      const r = await claim(user.token, d.fingerprint)
      expect(r.status).toBe(400)
      expect(r.body.errors.fingerprint._errors[0].code).toBe('REMOTE_AUTH_INVALID_FINGERPRINT')
    }
    await Bun.sleep(50)
    expect(after(d)).toEqual(['pending_ticket'])
  })

  test('unknown, malformed, not yet proven or gone: the same 400, nothing sent', async () => {
    const user = await makeUser()
    const unproven = await DesktopClient.connect()
    open.push(unproven)
    unproven.send({ op: 'init', encoded_public_key: unproven.encodedPublicKey })
    await unproven.waitFor('nonce_proof')
    const gone = await desktop()
    const sockets = remoteAuthStats().sockets
    gone.close()
    await serverForgot(gone, sockets)
    const bodies = []
    for (const fingerprint of ['A'.repeat(43), 'short', '!'.repeat(43), unproven.fingerprint, gone.fingerprint, '']) {
      const r = await claim(user.token, fingerprint)
      expect(r.status).toBe(400)
      bodies.push(r.body)
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1)
    expect(unproven.ops()).toEqual(['hello', 'nonce_proof'])
  })

  test('only user tokens', async () => {
    const d = await desktop()
    expect((await claim('', d.fingerprint)).status).toBe(401)
    expect((await claim('not-a-token', d.fingerprint)).status).toBe(401)
    const app = await makeApp()
    expect((await claim(`Bot ${app.bot_token}`, d.fingerprint)).status).toBe(403)
    expect((await api('POST', '/users/@me/remote-auth/finish', { body: { handshake_token: 'x' } })).status).toBe(401)
    expect((await api('POST', '/users/@me/remote-auth/cancel', { body: { handshake_token: 'x' } })).status).toBe(401)
    await Bun.sleep(50)
    expect(after(d)).toEqual([])
  })
})

describe('tickets', () => {
  test('20 parallel redemptions: exactly one token, one new session', async () => {
    const user = await makeUser()
    const d = await desktop()
    const ticket = await ticketFor(user, d)
    const before = (await sessionsOf(user.id)).length
    const results = await Promise.all(Array.from({ length: 20 }, () => login(ticket)))
    const won = results.filter((r) => r.status === 200)
    expect(won).toHaveLength(1)
    const lost = results.filter((r) => r.status === 400)
    expect(lost).toHaveLength(19)
    for (const r of lost)
      expect(r.body).toEqual({
        message: 'Invalid Form Body',
        code: 50035,
        errors: {
          ticket: { _errors: [{ code: 'REMOTE_AUTH_INVALID_TICKET', message: 'Invalid or expired ticket.' }] },
        },
      })
    expect(await sessionsOf(user.id)).toHaveLength(before + 1)
    expect((await api('GET', '/users/@me', { token: d.decrypt(won[0].body.encrypted_token).toString() })).status).toBe(
      200,
    )
  })

  test('replayed, expired after 2 minutes, unknown: refused, nothing issued', async () => {
    const user = await makeUser()
    const ticket = await ticketFor(user, await desktop())
    expect((await login(ticket)).status).toBe(200)
    expect((await login(ticket)).status).toBe(400)

    const late = await ticketFor(user, await desktop())
    const stored = (await ticketRows()).find((t) => t.ticketHash === sha256Hex(late))!
    expect(stored.expiresAt - stored.createdAt).toBe(TICKET_TTL_MS)
    clock.advance(TICKET_TTL_MS)
    const before = (await sessionsOf(user.id)).length
    expect((await login(late)).status).toBe(400)
    for (const t of ['', 'unknown', 'A'.repeat(43)]) expect((await login(t)).status).toBe(400)
    expect((await login('A'.repeat(129))).body.code).toBe(50035)
    expect(await sessionsOf(user.id)).toHaveLength(before)
  })

  test('a restart loses no completed login: the ticket outlives the desktop rows', async () => {
    const user = await makeUser()
    const ticket = await ticketFor(user, await desktop())
    await startRemoteAuthGateway() // start-up's clean-up of desktop rows
    expect((await login(ticket)).status).toBe(200)
  })

  test('expired tickets are swept from the table', async () => {
    const user = await makeUser()
    const ticket = await ticketFor(user, await desktop())
    clock.advance(TICKET_TTL_MS)
    const { sweepRemoteAuth } = await import('../../src/remote-auth/desktop')
    await sweepRemoteAuth()
    expect((await ticketRows()).some((t) => t.ticketHash === sha256Hex(ticket))).toBe(false)
  })
})

describe('MFA and the operator lock', () => {
  test('an MFA user finishes with elevation: 401 60003, /mfa/finish, retry', async () => {
    const user = await userWithTotp()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    const first = await finish(user.token, handshake)
    expect(first.status).toBe(401)
    expect(first.body.code).toBe(60003)
    expect(first.body.mfa.methods.map((m: any) => m.type)).toContain('totp')
    await Bun.sleep(50)
    expect(after(d)).toEqual(['pending_ticket'])
    const elevation = await api('POST', '/mfa/finish', {
      token: user.token,
      body: { ticket: first.body.mfa.ticket, mfa_type: 'totp', data: totpCode(user.secret) },
    })
    expect(elevation.status).toBe(200)
    const retry = await finish(user.token, handshake, {}, { 'x-service-mfa-authorization': elevation.body.token })
    expect(retry.status).toBe(204)
    const { ticket } = await d.waitFor('pending_login')
    const token = d.decrypt((await login(ticket)).body.encrypted_token).toString()
    expect((await api('GET', '/users/@me', { token })).body.mfa_enabled).toBe(true)
  })

  test('a user locked after claiming cannot finish; the desktop hears nothing more', async () => {
    const user = await makeUser()
    const d = await desktop()
    const handshake = (await claim(user.token, d.fingerprint)).body.handshake_token
    await lockUser(user.id)
    expect((await finish(user.token, handshake)).status).toBe(401)
    await Bun.sleep(50)
    expect(after(d)).toEqual(['pending_ticket'])
  })

  test('a user locked between finish and the exchange gets no token', async () => {
    const user = await makeUser()
    const ticket = await ticketFor(user, await desktop())
    await lockUser(user.id)
    expect((await login(ticket)).status).toBe(400)
    expect(await sessionsOf(user.id)).toHaveLength(0)
  })
})

describe('rate limits', () => {
  test(`mobile requests: ${MOBILE_REQUESTS.limit} a minute per user, then 429; another user is not affected`, async () => {
    const user = await makeUser()
    for (let i = 0; i < MOBILE_REQUESTS.limit; i++) expect((await claim(user.token, 'A'.repeat(43))).status).toBe(400)
    const limited = await cancel(user.token, 'x')
    expect(limited.status).toBe(429)
    expect(limited.body.retry_after).toBeGreaterThan(0)
    expect((await claim((await makeUser()).token, 'A'.repeat(43))).status).toBe(400)
    clock.advance(MOBILE_REQUESTS.windowMs)
    expect((await claim(user.token, 'A'.repeat(43))).status).toBe(400)
  })

  test(`ticket exchanges: ${LOGIN_REQUESTS.limit} a minute per IP, then 429`, async () => {
    await withConfig({ trustProxy: true }, async () => {
      const headers = { 'x-forwarded-for': '198.51.100.99' }
      for (let i = 0; i < LOGIN_REQUESTS.limit; i++) expect((await login('unknown', headers)).status).toBe(400)
      expect((await login('unknown', headers)).status).toBe(429)
      expect((await login('unknown', { 'x-forwarded-for': '198.51.100.98' })).status).toBe(400)
    })
  })
})
