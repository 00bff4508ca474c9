// Game relationships and game invites (issue 45, parts 2 and 4) on real sockets: game friends exist only inside one
// application's game (its OAuth2 tokens; a provisional account's too), GAME_RELATIONSHIP_ADD / REMOVE to both users'
// sessions of that game and their user sessions, never another game's; a Discord-wide block either way refuses them and
// ends them; no cap on game friends, the pending requests' cap at its edge. Game invites: the inviter's activity, the
// join secret to the recipient alone (PUT /lobbies with it joins), ask to join the other way, expiry, blocks.
import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { rawSql } from '../db/raw'
import { type GatewayClient, tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { player } from '../provisional/helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

const SCOPE = 'identify relationships.read relationships.write lobbies.write gateway.connect'
type User = Awaited<ReturnType<typeof makeUser>>
type App = Awaited<ReturnType<typeof makeApp>>
const gamer = async (app: App, user?: User) => {
  const u = user ?? (await makeUser())
  return { ...u, bearer: await bearerFor(u, app, SCOPE) }
}
const game = (token: string, method: string, id: string, body?: unknown) =>
  api(method, `/users/@me/game-relationships/${id}`, { token, body })
const gameTypes = async (token: string) =>
  Object.fromEntries(
    (await api('GET', '/users/@me/game-relationships', { token })).body.map((r: { id: string; type: number }) => [
      r.id,
      r.type,
    ]),
  )
const next = (s: GatewayClient, type: string, id: string, since = 0) =>
  s.waitFor((f) => f.t === type && f.d.id === id, 3000, { since })

describe('game relationships', () => {
  test('request and accept inside one game, events to that game only; blocks refuse and end them; who may call', async () => {
    const [app, other] = [await makeApp(), await makeApp()]
    const [a, b] = [await gamer(app), await gamer(app)]
    const sa = await sockets.identified(a.bearer)
    const sb = await sockets.identified(b.bearer)
    const bUser = await sockets.identified(b.token)
    const bOther = await sockets.identified(await bearerFor(b, other, SCOPE))

    expect((await game(a.bearer, 'PUT', b.id, {})).status).toBe(204)
    expect((await next(sa, 'GAME_RELATIONSHIP_ADD', b.id)).d).toMatchObject({
      id: b.id,
      application_id: app.id,
      type: 4,
      user_id: a.id,
      dm_access_type: 0,
      user: { id: b.id, username: b.username },
    })
    expect((await next(sb, 'GAME_RELATIONSHIP_ADD', a.id)).d).toMatchObject({ type: 3, should_notify: true })
    expect((await next(bUser, 'GAME_RELATIONSHIP_ADD', a.id)).d.type).toBe(3)
    let mark = sa.frames.length
    expect((await game(b.bearer, 'PUT', a.id)).status).toBe(204)
    expect((await next(sa, 'GAME_RELATIONSHIP_ADD', b.id, mark)).d.type).toBe(1)
    expect(await gameTypes(a.bearer)).toEqual({ [b.id]: 1 })
    expect(await gameTypes(b.token)).toEqual({ [a.id]: 1 }) // a user session sees every game's
    // Not a Discord friendship, and nothing in the other game.
    expect((await api('GET', '/users/@me/relationships', { token: a.bearer })).body).toEqual([])
    expect(await gameTypes(await bearerFor(a, other, SCOPE))).toEqual({})
    await bOther.expectNo('GAME_RELATIONSHIP_ADD', 50)
    const ready = await (await sockets.connect()).identify(a.bearer)
    expect(ready.game_relationships).toEqual([expect.objectContaining({ id: b.id, type: 1, application_id: app.id })])

    // By username: someone who never authorized the game is nobody (80004); a provisional player of it is someone.
    const stranger = await makeUser()
    const byName = (token: string, username: string) =>
      api('POST', '/users/@me/game-relationships', { token, body: { username } })
    expect((await byName(a.bearer, stranger.username)).body.code).toBe(80004)
    expect((await game(a.bearer, 'PUT', stranger.id, {})).body.code).toBe(10013)
    const guest = await player(app, 'game-guest', 'Game Guest')
    const guestName = (await api('GET', '/users/@me', { token: guest.bearer })).body.username
    expect((await byName(a.bearer, guestName)).status).toBe(204)
    expect((await game(guest.bearer, 'PUT', a.id)).status).toBe(204)
    expect((await gameTypes(guest.bearer))[a.id]).toBe(1)

    // Blocks, Discord-wide, in both directions: B blocks A, the game friendship ends for both.
    mark = sa.frames.length
    await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: { type: 2 } })
    expect((await next(sa, 'GAME_RELATIONSHIP_REMOVE', b.id, mark)).d).toMatchObject({ application_id: app.id })
    expect(await gameTypes(b.bearer)).toEqual({})
    for (const [from, to] of [
      [a.bearer, b.id],
      [b.bearer, a.id],
    ]) {
      const refused = await game(from, 'PUT', to, {})
      expect([refused.status, refused.body.code]).toEqual([400, 80000])
    }
    // A declines nothing it lacks; DELETE of the guest ends that game friendship on both sides.
    expect((await game(a.bearer, 'DELETE', guest.id)).status).toBe(204)
    expect(await gameTypes(guest.bearer)).toEqual({})

    // Bots: 20001; a user session may read but not write (it names no game); scopes as Discord's.
    const bot = await api('GET', '/users/@me/game-relationships', { token: `Bot ${app.bot_token}` })
    expect([bot.status, bot.body.code]).toEqual([403, 20001])
    expect((await game(a.token, 'PUT', b.id, {})).status).toBe(401)
    const readOnly = await bearerFor(a, app, 'identify relationships.read')
    expect((await game(readOnly, 'PUT', guest.id, {})).body.code).toBe(50001)
  })

  test('no cap on game friends; pending game requests capped at 1000 per game, at the edge', async () => {
    const app = await makeApp()
    const [a, b, c] = [await gamer(app), await gamer(app), await gamer(app)]
    const base = (BigInt(Date.now() - 1420070400000) << 22n) + BigInt(Math.floor(Math.random() * 1e6)) * 4096n
    const ids = Array.from({ length: 1000 }, (_, i) => String(base + BigInt(i)))
    const insert = async (head: string, rows: unknown[][]) => {
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500)
        await rawSql(`${head} VALUES ${chunk.map((r) => `(${r.map(() => '?').join(', ')})`).join(', ')}`, ...chunk.flat())
      }
    }
    await insert(
      'INSERT INTO users (id, username, created_at)',
      ids.map((id) => [id, `bare${id}`, Date.now()]),
    )
    const now = Date.now()
    const head = 'INSERT INTO game_relationships (user_id, other_id, application_id, type, since)'
    // A has 1000 game friends: a 1001st is still made.
    await insert(head, ids.map((o) => [a.id, o, app.id, 1, now]))
    expect((await game(b.bearer, 'PUT', a.id, {})).status).toBe(204)
    expect((await game(a.bearer, 'PUT', b.id, {})).status).toBe(204)
    expect((await gameTypes(a.bearer))[b.id]).toBe(1)
    // C has 999 pending: the 1000th goes, the 1001st is refused.
    await insert(head, ids.slice(1).map((o) => [c.id, o, app.id, 4, now]))
    expect((await game(c.bearer, 'PUT', a.id, {})).status).toBe(204)
    const over = await game(c.bearer, 'PUT', b.id, {})
    expect([over.status, over.body.code]).toEqual([400, 30002])
  }, 20_000)
})
