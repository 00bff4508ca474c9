// Limits hold under concurrency: an attempt is counted before the (async) password or code check.
import { afterEach, describe, expect, test } from 'bun:test'
import { api, makeUser, resetWorld } from '../helpers'
import { withConfig } from '../auth/helpers'
import { userWithTotp, mfaTicket } from '../mfa/helpers'
import { write } from '../../src/db/client'
import { knownIps } from '../../src/accounts/tables'

afterEach(resetWorld)

const login = (login: string, password: string, ip?: string) =>
  api('POST', '/auth/login', { body: { login, password }, headers: ip ? { 'x-forwarded-for': ip } : {} })

describe('login', () => {
  test('200 parallel wrong passwords for one account: 10 are checked (400), the rest get 429 at once', async () => {
    const user = await makeUser()
    const replies = await Promise.all(Array.from({ length: 200 }, (_, i) => login(user.email, `wrong-password-${i}`)))
    const statuses = replies.map((r) => r.status)
    expect(statuses.filter((s) => s === 400)).toHaveLength(10)
    expect(statuses.filter((s) => s === 429)).toHaveLength(190)
    for (const r of replies.filter((r) => r.status === 429)) expect(r.body.retry_after).toBeGreaterThan(0)
  }, 30_000)

  test('10 failures from one source limit that source; the 10th still gets checked, the 11th is refused', async () => {
    const user = await makeUser()
    await withConfig({ trustProxy: true }, async () => {
      for (let i = 0; i < 9; i++) expect((await login(user.email, 'wrong-password', '198.51.100.7')).status).toBe(400)
      expect((await login(user.email, 'wrong-password', '198.51.100.7')).status).toBe(400)
      expect((await login(user.email, user.password, '198.51.100.7')).status).toBe(429)
    })
  }, 30_000)

  test('strangers failing against an account do not lock its owner out (new IP, and known IP)', async () => {
    const user = await makeUser()
    await withConfig({ trustProxy: true, newLoginLocationCheck: false }, async () => {
      for (let i = 0; i < 10; i++)
        expect((await login(user.email, 'wrong-password', `203.0.113.${i + 1}`)).status).toBe(400)
      const owner = await login(user.email, user.password, '192.0.2.50')
      expect(owner.status).toBe(200)
      expect(owner.body.token).toBeString()
    })
  }, 30_000)

  test('a distributed guess (100 failures from new IPs) holds every new IP, but not the owner on a known IP', async () => {
    const user = await makeUser()
    await write((w) => w.insert(knownIps).values({ userId: user.id, ip: '192.0.2.99', createdAt: Date.now() }).run())
    await withConfig({ trustProxy: true, newLoginLocationCheck: false }, async () => {
      const guesses = await Promise.all(
        Array.from({ length: 120 }, (_, i) => login(user.email, `wrong-guess-${i}`, `10.9.${i >> 8}.${i & 255}`)),
      )
      expect(guesses.filter((r) => r.status === 400)).toHaveLength(100)
      expect(guesses.filter((r) => r.status === 429)).toHaveLength(20)
      expect((await login(user.email, user.password, '10.10.0.1')).status).toBe(429)
      expect((await login(user.email, user.password, '192.0.2.99')).status).toBe(200)
    })
  }, 30_000)
})

describe('MFA codes', () => {
  test('100 parallel wrong backup codes on one ticket: at most 5 are checked, the ticket then dies', async () => {
    const user = await userWithTotp()
    const { ticket } = await mfaTicket(user)
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        api('POST', '/auth/mfa/backup', { body: { ticket, code: `zz${String(i).padStart(6, '0')}` } }),
      ),
    )
    const statuses = replies.map((r) => r.status)
    expect(statuses.filter((s) => s === 400).length).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(95)
    // A right code on the dead ticket no longer logs in.
    const after = await api('POST', '/auth/mfa/backup', { body: { ticket, code: user.backupCodes[0] } })
    expect(after.status).not.toBe(200)
  }, 30_000)

  test('wrong codes across fresh tickets: the user allowance (20) holds under parallel requests', async () => {
    const user = await userWithTotp()
    const tickets = await Promise.all(Array.from({ length: 5 }, () => mfaTicket(user).then((b) => b.ticket as string)))
    const replies = await Promise.all(
      tickets.flatMap((ticket) =>
        Array.from({ length: 5 }, (_, i) =>
          api('POST', '/auth/mfa/backup', { body: { ticket, code: `yy${String(i).padStart(6, '0')}` } }),
        ),
      ),
    )
    expect(replies.filter((r) => r.status === 400)).toHaveLength(20)
    expect(replies.filter((r) => r.status === 429)).toHaveLength(5)
  }, 30_000)
})

describe('password confirmation', () => {
  test('parallel wrong passwords on an account change: 10 checked, the rest 429', async () => {
    const user = await makeUser()
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        api('POST', '/users/@me/mfa/totp/enable', {
          token: user.token,
          body: { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', code: '123456', password: `wrong-${i}` },
        }),
      ),
    )
    expect(replies.filter((r) => r.status === 400)).toHaveLength(10)
    expect(replies.filter((r) => r.status === 429)).toHaveLength(30)
  }, 30_000)
})
