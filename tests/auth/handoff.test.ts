import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { api, makeUser, resetWorld } from '../helpers'
import { registerUser, withConfig } from './helpers'

afterEach(resetWorld)

const create = (token: string, key = 'client-key-1') => api('POST', '/auth/handoff', { token, body: { key } })
const exchange = (key: string, handoff_token: string, headers: Record<string, string> = {}) =>
  api('POST', '/auth/handoff/exchange', { body: { key, handoff_token }, headers })

describe('handoff', () => {
  test('exchange gives a new session and the user', async () => {
    const user = await makeUser()
    const { body } = await create(user.token)
    const r = await exchange('client-key-1', body.handoff_token)
    expect(r.status).toBe(200)
    expect(r.body.user).toMatchObject({ id: user.id, username: user.username })
    expect(r.body.token).not.toBe(user.token)
    expect((await api('GET', '/users/@me', { token: r.body.token })).body.id).toBe(user.id)
  })

  test('wrong key, second use and expiry fail alike', async () => {
    const user = await makeUser()
    const wrongKey = await exchange('other-key', (await create(user.token)).body.handoff_token)
    const token = (await create(user.token)).body.handoff_token
    expect((await exchange('client-key-1', token)).status).toBe(200)
    const reused = await exchange('client-key-1', token)
    const old = (await create(user.token)).body.handoff_token
    clock.advance(5 * 60_000 + 1000)
    const expired = await exchange('client-key-1', old)
    for (const r of [wrongKey, reused, expired]) {
      expect(r.status).toBe(400)
      expect(r.body).toEqual(wrongKey.body)
    }
    expect(wrongKey.body.errors.handoff_token._errors[0].code).toBe('HANDOFF_TOKEN_INVALID')
  })

  test('only from the creating IP', async () => {
    await withConfig({ trustProxy: true }, async () => {
      const user = await makeUser()
      const token = (
        await api('POST', '/auth/handoff', {
          token: user.token,
          body: { key: 'k' },
          headers: { 'x-forwarded-for': '198.51.100.1' },
        })
      ).body.handoff_token
      expect((await exchange('k', token, { 'x-forwarded-for': '198.51.100.2' })).status).toBe(400)
      const again = (
        await api('POST', '/auth/handoff', {
          token: user.token,
          body: { key: 'k' },
          headers: { 'x-forwarded-for': '198.51.100.1' },
        })
      ).body.handoff_token
      expect((await exchange('k', again, { 'x-forwarded-for': '198.51.100.1' })).status).toBe(200)
    })
  })

  test('a token minted before an operator lock cannot be exchanged after it', async () => {
    const user = await makeUser()
    const token = (await create(user.token)).body.handoff_token
    const { lockUser } = await import('../../src/auth/lock')
    await lockUser(user.id)
    expect((await exchange('client-key-1', token)).status).toBe(400)
  })

  test('20 parallel exchanges: exactly one session', async () => {
    const user = await makeUser()
    const token = (await create(user.token)).body.handoff_token
    const results = await Promise.all(Array.from({ length: 20 }, () => exchange('client-key-1', token)))
    expect(results.filter((r) => r.status === 200)).toHaveLength(1)
    expect(results.filter((r) => r.status === 400)).toHaveLength(19)
  })

  test('needs a user token to create; validates the body', async () => {
    expect((await api('POST', '/auth/handoff', { body: { key: 'k' } })).status).toBe(401)
    const user = await makeUser()
    expect((await api('POST', '/auth/handoff', { token: user.token, body: {} })).status).toBe(400)
    expect((await api('POST', '/auth/handoff/exchange', { body: { key: 'k' } })).body.code).toBe(50035)
  })
})

describe('fingerprints', () => {
  const fingerprint = (ip = '198.51.100.30') => api('POST', '/auth/fingerprint', { headers: { 'x-forwarded-for': ip } })

  test('"<snowflake>.<MAC>"; 3 valid per 2 minutes per IP, the 4th returned but not valid', async () => {
    await withConfig({ trustProxy: true }, async () => {
      const prints: string[] = []
      for (let i = 0; i < 4; i++) {
        const r = await fingerprint()
        expect(r.status).toBe(200)
        expect(r.body.fingerprint).toMatch(/^\d{17,20}\.[A-Za-z0-9_-]+$/)
        prints.push(r.body.fingerprint)
      }
      // The 4th cannot give its id to a new account; the 3rd can.
      const fourth = await registerUser({ fingerprint: prints[3] })
      const fourthId = (await api('GET', '/users/@me', { token: fourth.r.body.token })).body.id
      expect(fourthId).not.toBe(prints[3].split('.')[0])
      const third = await registerUser({ fingerprint: prints[2] })
      expect((await api('GET', '/users/@me', { token: third.r.body.token })).body.id).toBe(prints[2].split('.')[0])
      // Another IP has its own allowance; after 2 minutes the first IP has room again.
      const elsewhere = (await fingerprint('198.51.100.31')).body.fingerprint
      clock.advance(120_001)
      const later = (await fingerprint()).body.fingerprint
      for (const f of [elsewhere, later]) {
        const r = await registerUser({ fingerprint: f })
        expect((await api('GET', '/users/@me', { token: r.r.body.token })).body.id).toBe(f.split('.')[0])
      }
    })
  })

  test('X-Fingerprint is read on registration', async () => {
    const f = (await api('POST', '/auth/fingerprint')).body.fingerprint
    const r = await registerUser({}, { 'x-fingerprint': f })
    expect((await api('GET', '/users/@me', { token: r.r.body.token })).body.id).toBe(f.split('.')[0])
  })
})
