// The web client as an application (issue 46): the first-party OAuth2 application, its Bearer token issued to a user
// session (consent implied) and ended with it, listed among the authorized apps; the lobby routes take it as a member
// of any application's lobby (spec §4.1 refuses user sessions), its Gateway session hears those lobbies; and
// GET /users/@me/lobbies, the home page's "my lobbies".
import { afterEach, describe, expect, test } from 'bun:test'
import { closeEndedCredentials } from '../../src/gateway/limits'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

const open: GatewayClient[] = []
afterEach(() => {
  open.splice(0).forEach((c) => c.close())
  resetWorld()
})

async function issue(session: string) {
  const r = await api('POST', '/oauth2/first-party/token', { token: session })
  expect(r.status).toBe(200)
  return r.body as { access_token: string; token_type: string; scope: string; application: { id: string } }
}
const bearer = async (session: string) => `Bearer ${(await issue(session)).access_token}`

describe('POST /oauth2/first-party/token', () => {
  test('a user session gets a Bearer token of the one first-party application; other callers are refused', async () => {
    const alice = await makeUser()
    const bob = await makeUser()
    const first = await issue(alice.token)
    expect(first).toMatchObject({
      token_type: 'Bearer',
      scope: 'identify lobbies.write gateway.connect relationships.read relationships.write',
    })
    const again = await issue(bob.token)
    expect(again.application.id).toBe(first.application.id)
    expect(again.access_token).not.toBe(first.access_token)
    // Who the token is: the session's user (GET /oauth2/@me, GET /users/@me with identify).
    const me = await api('GET', '/oauth2/@me', { token: `Bearer ${first.access_token}` })
    expect(me.body).toMatchObject({ application: { id: first.application.id }, user: { id: alice.id } })
    expect((await api('GET', '/users/@me', { token: `Bearer ${first.access_token}` })).body.id).toBe(alice.id)
    // Only a user session: not its own Bearer token, not a bot, not anonymous.
    expect((await api('POST', '/oauth2/first-party/token', { token: `Bearer ${first.access_token}` })).status).toBe(401)
    const app = await makeApp()
    expect((await api('POST', '/oauth2/first-party/token', { token: `Bot ${app.bot_token}` })).status).toBe(403)
    expect((await api('POST', '/oauth2/first-party/token', {})).status).toBe(401)
  })

  test('listed as the first-party app; logging the session out ends its tokens and closes their Gateway', async () => {
    const alice = await makeUser()
    const web = await bearer(alice.token)
    const listed = await api('GET', '/oauth2/tokens', { token: alice.token })
    expect(listed.body).toEqual([expect.objectContaining({ first_party: true, scopes: expect.any(Array) })])
    const socket = (await GatewayClient.identified(web)).client
    open.push(socket)
    expect((await api('POST', '/auth/logout', { token: alice.token, body: {} })).status).toBe(204)
    expect((await api('GET', '/oauth2/@me', { token: web })).status).toBe(401)
    // The Gateway's credential check (every 5 s) closes it; run now rather than waited for.
    await closeEndedCredentials()
    expect((await socket.waitForClose()).code).toBe(4004)
  })

  test('a session holds 5 tokens at most (the oldest goes); its limit is 10 a minute', async () => {
    const alice = await makeUser()
    const tokens: string[] = []
    for (let i = 0; i < 10; i++) tokens.push(`Bearer ${(await issue(alice.token)).access_token}`)
    const alive = await Promise.all(tokens.map(async (t) => (await api('GET', '/oauth2/@me', { token: t })).status))
    expect(alive).toEqual([401, 401, 401, 401, 401, 200, 200, 200, 200, 200])
    // The route's own limit (tests run with route limits counted but not enforced: ROUTE_RATE_LIMITS).
    const last = await api('POST', '/oauth2/first-party/token', { token: alice.token, rateLimited: 'return' })
    expect(last.headers.get('x-ratelimit-limit')).toBe('10')
    expect(last.headers.get('x-ratelimit-remaining')).toBe('0')
  })
})

describe('first-party tokens issued within one millisecond', () => {
  test('the newest five stay, in the order they were issued', async () => {
    const alice = await makeUser()
    const realNow = Date.now
    const frozen = realNow()
    // Every token of this test gets the same created_at: only their order of issue tells the newest.
    Date.now = () => frozen
    const tokens: string[] = []
    try {
      for (let i = 0; i < 7; i++) tokens.push(`Bearer ${(await issue(alice.token)).access_token}`)
    } finally {
      Date.now = realNow
    }
    const alive = await Promise.all(tokens.map(async (t) => (await api('GET', '/oauth2/@me', { token: t })).status))
    expect(alive).toEqual([401, 401, 200, 200, 200, 200, 200])
  })
})

describe('lobbies through the first-party token', () => {
  test("its Gateway session hears every application's lobby its user is in, and joins their calls", async () => {
    const { bot, players } = await setup(1)
    const [alice] = players
    const web = await bearer(alice.token)
    const socket = (await GatewayClient.identified(web)).client
    open.push(socket)
    const lobby = await createLobby(bot, { members: [{ id: alice.id }] })
    expect((await socket.waitFor('LOBBY_CREATE')).d.id).toBe(lobby.id)
    const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'gg' } })
    expect(sent.status).toBe(201)
    expect((await socket.waitFor('LOBBY_MESSAGE_CREATE')).d).toMatchObject({ content: 'gg', lobby_id: lobby.id })
    socket.send(17, [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }])
    expect((await socket.waitFor('LOBBY_VOICE_SERVER_OFFER')).d).toMatchObject({ lobby_id: lobby.id })
  })

  test("GET /users/@me/lobbies: none, then every application's (newest first, 100 at most), named members", async () => {
    const first = await setup(1)
    const second = await setup(0)
    const [alice] = first.players
    const web = await bearer(alice.token)
    const empty = await api('GET', '/users/@me/lobbies', { token: web })
    expect(empty.status).toBe(200)
    expect(empty.body).toEqual([])

    const made: string[] = []
    for (let i = 0; i < 100; i++)
      made.push((await createLobby(first.bot, { members: [{ id: alice.id }], metadata: { name: `L${i}` } })).id)
    const newest = await createLobby(second.bot, { members: [{ id: alice.id }] })
    await createLobby(second.bot, {}) // not hers
    const all = await api('GET', '/users/@me/lobbies', { token: web })
    expect(all.body).toHaveLength(100)
    expect(all.body[0].id).toBe(newest.id)
    expect(all.body[1]).toMatchObject({ id: made[99], metadata: { name: 'L99' }, application: { id: first.app.id } })
    expect(all.body[99].id).toBe(made[1])
    expect(all.body[0].members).toEqual([
      expect.objectContaining({ id: alice.id, user: expect.objectContaining({ id: alice.id }) }),
    ])
    // A game's token lists its own application's only, as it reads them; a user session and a bot are refused.
    const game = await api('GET', '/users/@me/lobbies', { token: alice.bearer })
    expect(game.body).toHaveLength(100)
    expect(game.body.some((l: { id: string }) => l.id === newest.id)).toBe(false)
    expect(game.body[0].members[0].user).toBeUndefined()
    expect((await api('GET', '/users/@me/lobbies', { token: alice.token })).status).toBe(401)
    expect((await api('GET', '/users/@me/lobbies', { token: first.bot })).status).toBe(401)
  })
})
