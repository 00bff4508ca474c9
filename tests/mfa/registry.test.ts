// The registry of second factors is the one place a factor is named (issue 29). A factor that exists only in this
// file, put in a registry beside the real ones, is in the login answer (its field, in the list's order) and in a 60003
// answer's methods, and is proven through POST /auth/mfa/<type> and POST /mfa/finish of the endpoints built from that
// registry; the server's own registry does not know it. The pages get every method from the registry the server runs.
import { afterEach, describe, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { httpBasics } from '../../src/http/basics'
import { endpointRoutes } from '../../src/http/endpoint'
import type { SecondFactor } from '../../src/mfa/factor'
import { FACTORS, registry } from '../../src/mfa/factors'
import { createRegistry } from '../../src/mfa/registry'
import { mfaEndpoints } from '../../src/mfa/routes'
import { secondFactorHook } from '../../src/mfa/second-factor'
import { api, makeUser, resetWorld, server } from '../helpers'
import { totpCode, userWithTotp } from './helpers'

afterEach(resetWorld)

/** A strong factor that takes `coo-<user id>`: enrolled for the users in `pigeons`. */
const pigeons = new Set<string>()
const pigeon: SecondFactor = {
  type: 'pigeon',
  strong: true,
  page: { label: 'Carrier pigeon', prompt: 'The word the pigeon brought', input: 'text' },
  enrolled: async (userId) => pigeons.has(userId),
  verify: async (ticket, code) => code === `coo-${ticket.userId}`,
  remove: async (userId) => void pigeons.delete(userId),
}

// First in the list: the strongest, so first in every answer.
const withPigeon = createRegistry([pigeon, ...FACTORS])
const app = new Elysia().use(httpBasics).group('/api/v9', (api) => api.use(endpointRoutes(mfaEndpoints(withPigeon))))

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await app.handle(
    new Request(`http://localhost/api/v9${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  )
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

describe('a factor registered only in a test registry', () => {
  test('is in the login answer, in its place, and finishes a login through POST /auth/mfa/<type>', async () => {
    await server()
    const user = await userWithTotp()
    pigeons.add(user.id)
    const answer = (await secondFactorHook(withPigeon).challenge(user.id, 'login'))!
    expect(answer).toEqual({
      user_id: user.id,
      mfa: true,
      ticket: expect.any(String),
      pigeon: true,
      webauthn: null,
      totp: true,
      sms: false,
      backup: true,
    })
    expect(Object.keys(answer).slice(3)).toEqual(['pigeon', ...FACTORS.map((f) => f.type)])

    const wrong = await call('POST', '/auth/mfa/pigeon', { ticket: answer.ticket, code: 'tweet' })
    expect(wrong).toEqual({ status: 400, body: { code: 60008, message: 'Invalid two-factor code' } })
    const right = await call('POST', '/auth/mfa/pigeon', { ticket: answer.ticket, code: `coo-${user.id}` })
    expect(right.status).toBe(200)
    expect(right.body).toEqual({ token: expect.any(String), user_settings: expect.any(Object) })
    expect((await api('GET', '/users/@me', { token: right.body.token })).body.id).toBe(user.id)

    // The server's own registry has no such factor: its route answers 404, and its login answer has no such field.
    const elsewhere = await api('POST', '/auth/mfa/pigeon', { body: { ticket: answer.ticket, code: `coo-${user.id}` } })
    expect(elsewhere.status).toBe(404)
    const login = await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })
    expect(Object.keys(login.body).slice(3)).toEqual(FACTORS.map((f) => f.type))
  })

  test('turns MFA on by itself, is a 60003 method first, and elevates through POST /mfa/finish', async () => {
    const user = await makeUser()
    pigeons.add(user.id)
    expect(await withPigeon.enabled(user.id)).toBe(true)
    expect(await registry.enabled(user.id)).toBe(false)

    const auth = { authorization: user.token }
    const first = await call('POST', '/users/@me/mfa/codes-verification', {}, auth)
    expect(first.status).toBe(401)
    expect(first.body.code).toBe(60003)
    expect(first.body.mfa.methods).toEqual([{ type: 'pigeon' }])
    const finish = await call(
      'POST',
      '/mfa/finish',
      { ticket: first.body.mfa.ticket, mfa_type: 'pigeon', data: `coo-${user.id}` },
      auth,
    )
    expect(finish.status).toBe(200)
    const retry = await call(
      'POST',
      '/users/@me/mfa/codes-verification',
      {},
      { ...auth, 'x-service-mfa-authorization': finish.body.token },
    )
    expect(retry).toEqual({ status: 200, body: { backup_codes: [] } })

    // Removing every factor (an account revert) removes it too: MFA is off again (60002).
    await withPigeon.removeAll(user.id)
    expect(pigeons.has(user.id)).toBe(false)
    const again = await call('POST', '/users/@me/mfa/codes-verification', {}, auth)
    expect(again.body.code).toBe(60002)
  })

  test('with TOTP beside it: both methods, in the registry order, and TOTP still proves', async () => {
    const user = await userWithTotp()
    pigeons.add(user.id)
    const auth = { authorization: user.token }
    const first = await call('POST', '/users/@me/mfa/codes-verification', {}, auth)
    expect(first.body.mfa.methods).toEqual([
      { type: 'pigeon' },
      { type: 'totp', backup_codes_allowed: true },
      { type: 'backup' },
    ])
    const finish = await call(
      'POST',
      '/mfa/finish',
      { ticket: first.body.mfa.ticket, mfa_type: 'totp', data: totpCode(user.secret) },
      auth,
    )
    expect(finish.status).toBe(200)
  })
})

describe('the registry the server runs with', () => {
  test('authenticator_types are its factors with a type, ascending, and the pages get every method in its order', async () => {
    const user = await userWithTotp()
    const me = await api('GET', '/users/@me', { token: user.token })
    expect(me.body.authenticator_types).toEqual(await registry.authenticatorTypes(user.id))
    expect(me.body.authenticator_types).toEqual([2])

    const { url } = await server()
    const html = await (await fetch(`${url}/login`)).text()
    const meta = /<meta name="mfa-methods" content="([^"]*)">/.exec(html)![1]!
    const methods = JSON.parse(meta.replaceAll('&quot;', '"').replaceAll('&#39;', "'").replaceAll('&amp;', '&'))
    expect(methods.map((m: { type: string }) => m.type)).toEqual([...FACTORS.map((f) => f.type), 'password'])
    expect(methods[0]).toEqual({ type: FACTORS[0]!.type, ...FACTORS[0]!.page })
  })
})
