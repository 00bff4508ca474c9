// Malformed values a client controls (cookies, percent-encodings in headers and queries) are parsed without throwing:
// each gets the answer a missing or wrong value gets, never a 5xx.
import { afterEach, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { badPercent, cookieHeader } from '../proof/arbitraries'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { userWithTotp } from '../mfa/helpers'

afterEach(resetWorld)

const MALFORMED = ['%', '%E0%A4%A', '%zz', '%C0%AF', '%ED%A0%80', 'a%', '"%"', '%%', '%uD800']

describe('the elevation cookie', () => {
  test('a malformed __Secure-recent_mfa cookie asks for elevation (60003) like a missing one', async () => {
    const user = await userWithTotp()
    const ask = (cookie: string) =>
      api('POST', '/users/@me/mfa/codes-verification', {
        token: user.token,
        body: { regenerate: false },
        headers: { cookie },
      })
    for (const value of MALFORMED)
      for (const cookie of [`__Secure-recent_mfa=${value}`, `a=%; __Secure-recent_mfa=${value}; b=%E0%A4%A`]) {
        const r = await ask(cookie)
        expect({ cookie, status: r.status, code: r.body.code }).toEqual({ cookie, status: 401, code: 60003 })
      }
    // Generated Cookie headers (the REST fuzzer's): the same answer for each.
    await fc.assert(
      fc.asyncProperty(cookieHeader, async (cookie) => {
        const r = await ask(cookie)
        expect({ cookie, status: r.status, code: r.body.code }).toEqual({ cookie, status: 401, code: 60003 })
      }),
      { numRuns: 100, seed: 26 },
    )
  }, 30_000)
})

describe('percent-encodings that do not decode', () => {
  test('in query keys and values, on lane and Elysia routes, and in headers: 4xx or 2xx, never 5xx', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const lobby = await api('POST', '/lobbies', { token: `Bot ${app.bot_token}`, body: { members: [{ id: user.id }] } })
    const paths = [
      '/users/@me',
      `/lobbies/${lobby.body.id}`,
      `/lobbies/${lobby.body.id}/messages`,
      '/users/@me/guilds',
      '/experiments',
      '/oauth2/authorize',
    ]
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...paths), badPercent, badPercent, async (path, key, value) => {
        for (const token of [user.token, `Bot ${app.bot_token}`]) {
          const r = await api('GET', `${path}?${key}=${value}&limit=${value}`, {
            token,
            headers: {
              'x-super-properties': value,
              'x-fingerprint': value,
              'x-request-id': key,
              cookie: cookieOf(value),
            },
          })
          expect({ path, key, value, server: r.status >= 500 }).toEqual({ path, key, value, server: false })
          if (r.status >= 400) expect(r.body.code).toBeNumber()
        }
      }),
      { numRuns: 60, seed: 26 },
    )
  }, 30_000)
})

const cookieOf = (value: string) => `__Secure-recent_mfa=${value}; ${value}=${value}`
