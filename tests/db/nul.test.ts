// A NUL character (U+0000) in a string of a request body: PostgreSQL's text cannot hold it (SQLite's can), so it is
// refused before any store sees it, the same way on both databases: 400 50035 naming the field, nothing stored, the
// server (and the open transactions of other requests) unharmed. Run on SQLite and on PostgreSQL (TEST_DATABASE).
// Where a NUL reaches a store another way (a Gateway payload, a path or query parameter), the PostgreSQL side never
// sends it: a read finds nothing, as on SQLite where no stored row holds one, and a write is refused.
import { beforeAll, describe, expect, test } from 'bun:test'
import { transaction } from '../../src/db/client'
import { findUserByUsername, insertUser } from '../../src/accounts/store'
import { snowflake } from '../../src/core/snowflake'
import { api, makeApp, makeUser, onPostgres, server } from '../helpers'

const NUL = 'a\u0000b'
const nulError = { code: 'BASE_TYPE_INVALID', message: 'Null characters are not allowed.' }

let user: Awaited<ReturnType<typeof makeUser>>
let bot: string
let lobbyId: string
let channelId: string

beforeAll(async () => {
  user = await makeUser()
  const app = await makeApp()
  bot = `Bot ${app.bot_token}`
  const lobby = await api('POST', '/lobbies', {
    token: bot,
    body: { members: [{ id: user.id }], metadata: { round: '1' } },
  })
  lobbyId = lobby.body.id
  const guild = await api('POST', '/guilds', { token: user.token, body: { name: 'nul guild' } })
  channelId = (await api('GET', `/guilds/${guild.body.id}/channels`, { token: user.token })).body[0].id
})

describe(`a NUL in a body's string (${onPostgres ? 'PostgreSQL' : 'SQLite'})`, () => {
  test('a lobby message: 400 50035 at content; nothing stored; the next message goes through', async () => {
    const refused = await api('POST', `/lobbies/${lobbyId}/messages`, { token: bot, body: { content: NUL } })
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      code: 50035,
      message: 'Invalid Form Body',
      errors: { content: { _errors: [nulError] } },
    })
    const sent = await api('POST', `/lobbies/${lobbyId}/messages`, { token: bot, body: { content: 'ab' } })
    expect(sent.status).toBe(201)
    const listed = await api('GET', `/lobbies/${lobbyId}/messages`, { token: bot })
    expect(listed.body.map((m: { content: string }) => m.content)).toEqual(['ab'])
  })

  test('a lobby metadata value, a nested key path: 400 50035 at metadata.<key>', async () => {
    const refused = await api('PATCH', `/lobbies/${lobbyId}`, { token: bot, body: { metadata: { round: NUL } } })
    expect(refused.status).toBe(400)
    expect(refused.body.errors).toEqual({ metadata: { round: { _errors: [nulError] } } })
    expect((await api('GET', `/lobbies/${lobbyId}`, { token: bot })).body.metadata).toEqual({ round: '1' })
  })

  test('a guild name, a channel message, a display name, a registration: 400 50035 at the field', async () => {
    const answers = await Promise.all([
      api('POST', '/guilds', { token: user.token, body: { name: NUL } }),
      api('POST', `/channels/${channelId}/messages`, { token: user.token, body: { content: NUL } }),
      api('PATCH', '/users/@me', { token: user.token, body: { global_name: NUL } }),
      api('POST', '/auth/register', {
        body: { username: 'nulname', email: NUL, password: 'a long enough password', date_of_birth: '1990-01-01' },
      }),
    ])
    expect(answers.map((r) => [r.status, r.body.code, r.body.errors])).toEqual([
      [400, 50035, { name: { _errors: [nulError] } }],
      [400, 50035, { content: { _errors: [nulError] } }],
      [400, 50035, { global_name: { _errors: [nulError] } }],
      [400, 50035, { email: { _errors: [nulError] } }],
    ])
    expect((await api('GET', '/users/@me', { token: user.token })).body.global_name).not.toBe(NUL)
  })

  test('in a list, in a multipart payload_json: the path names the item', async () => {
    const listed = await api('POST', '/lobbies', {
      token: bot,
      body: { members: [{ id: user.id }, { id: user.id, metadata: { role: NUL } }] },
    })
    expect(listed.status).toBe(400)
    expect(listed.body.errors).toEqual({ members: { 1: { metadata: { role: { _errors: [nulError] } } } } })
    const form = new FormData()
    form.set('payload_json', JSON.stringify({ content: NUL }))
    const { url } = await server()
    const multipart = await fetch(`${url}/api/v9/lobbies/${lobbyId}/messages`, {
      method: 'POST',
      headers: { authorization: bot },
      body: form,
    })
    expect(multipart.status).toBe(400)
    expect(((await multipart.json()) as { errors: unknown }).errors).toEqual({ content: { _errors: [nulError] } })
  })

  test('a NUL in a path or query parameter: not found, as for any name no row holds', async () => {
    expect((await api('GET', `/invites/${encodeURIComponent(NUL)}`)).status).toBe(404)
  })
})

describe.skipIf(!onPostgres)('a NUL that reaches the PostgreSQL side', () => {
  test('a read inside a transaction finds nothing and leaves the transaction usable; a write is refused (400)', async () => {
    const id = snowflake()
    const found = await transaction(async () => {
      const before = await findUserByUsername(NUL)
      await insertUser({ id, username: `nul${id}`, createdAt: Date.now() })
      return before
    })
    expect(found).toBeUndefined()
    expect((await findUserByUsername(`nul${id}`))?.id).toBe(id)
    const refused = await transaction(() =>
      insertUser({ id: snowflake(), username: NUL, createdAt: Date.now() }),
    ).catch((error) => error)
    expect(refused).toMatchObject({ status: 400, code: 50035 })
  })
})
