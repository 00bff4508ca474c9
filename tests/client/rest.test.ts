// suite: one pass
// The SDK's REST client against a real server process: typed calls answer what the routes declare, a bad body is
// Discord's 50035 as one ApiError, and a burst past a route's limit (10 lobby messages a second) all goes through,
// paced by the bucket headers, where a client that ignores them is refused.
import { describe, expect, test } from 'bun:test'
import { ApiError, Client, type LobbyMessage } from '../../client/src/index'
import { startServer } from './server'

const server = await startServer()
const app = await server.newApp()
const player = await server.player(app)

describe('REST against a real server', () => {
  test('GET /users/@me with a user token, and with an OAuth2 Bearer token', async () => {
    const asUser = new Client({ baseUrl: server.url, token: player.token })
    const me = await asUser.rest.get('/users/@me')
    expect(me.id).toBe(player.id)
    expect(me.email).toBe(player.email)
    const asGame = new Client({ baseUrl: server.url })
    asGame.setToken(player.bearer, 'Bearer')
    expect((await asGame.rest.get('/users/@me')).id).toBe(player.id)
  })

  test('a bad body: 400 50035 with the field errors; no token: 401', async () => {
    const game = new Client({ baseUrl: server.url, token: `Bearer ${player.bearer}` })
    const error = await game.rest.put('/lobbies', { body: { secret: '' } }).catch((e) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error.status).toBe(400)
    expect(error.code).toBe(50035)
    expect(Object.keys(error.fieldErrors())).toEqual(['secret'])
    const anonymous = await new Client({ baseUrl: server.url }).rest.get('/users/@me').catch((e) => e)
    expect(anonymous).toMatchObject({ status: 401 })
  })

  test('15 messages at once through one lobby route (10 a second): all posted, paced by the bucket', async () => {
    const game = new Client({ baseUrl: server.url, token: `Bearer ${player.bearer}` })
    const lobby = await game.rest.put('/lobbies', { body: { secret: `burst-${Date.now()}` } })
    const started = Date.now()
    const sent: LobbyMessage[] = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        game.rest.post(`/lobbies/${lobby.id}/messages`, { body: { content: `m${i}` } }),
      ),
    )
    expect(sent.map((m) => m.content).sort()).toEqual(Array.from({ length: 15 }, (_, i) => `m${i}`).sort())
    expect(Date.now() - started).toBeGreaterThan(300)
    // The route really limits: a client that ignores the headers is refused within the same second.
    const raw = await Promise.all(
      Array.from({ length: 12 }, () =>
        fetch(`${server.url}/api/v10/lobbies/${lobby.id}/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${player.bearer}`, 'content-type': 'application/json' },
          body: JSON.stringify({ content: 'raw' }),
        }).then((r) => r.status),
      ),
    )
    expect(raw).toContain(429)
    const history = await game.rest.get(`/lobbies/${lobby.id}/messages`, { query: { limit: 50 } })
    expect(history.filter((m) => m.content.startsWith('m')).length).toBe(15)
  })
})
