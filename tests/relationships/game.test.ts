// Game relationships and game invites (issue 45, parts 2 and 4) on real sockets: game friends exist only inside one
// application's game (its OAuth2 tokens; a provisional account's too), GAME_RELATIONSHIP_ADD / REMOVE to both users'
// sessions of that game and their user sessions, never another game's; a Discord-wide block either way refuses them and
// ends them; no cap on game friends, the pending requests' cap at its edge. Game invites: the inviter's activity, the
// join secret to the recipient alone (PUT /lobbies with it joins), ask to join the other way, expiry, blocks.
import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { sweepGameInvites } from '../../src/relationships/invites'
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
    // Game friends see each other's presence through that game's sessions, not another game's.
    sa.send(3, { status: 'dnd', activities: [], since: null, afk: false })
    await sb.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === a.id && f.d.status === 'dnd')
    expect((await (await sockets.connect()).identify(b.bearer)).presences).toEqual([
      expect.objectContaining({ user: { id: a.id }, status: 'dnd' }),
    ])
    await bOther.expectNo('PRESENCE_UPDATE', 50)

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
  }, 15_000) // the file's first requests warm the server up (PostgreSQL)

  test('no cap on game friends; pending game requests capped at 1000 per game, at the edge', async () => {
    const app = await makeApp()
    const [a, b, c] = [await gamer(app), await gamer(app), await gamer(app)]
    const base = (BigInt(Date.now() - 1420070400000) << 22n) + BigInt(Math.floor(Math.random() * 1e6)) * 4096n
    const ids = Array.from({ length: 1000 }, (_, i) => String(base + BigInt(i)))
    const insert = async (head: string, rows: unknown[][]) => {
      for (let i = 0; i < rows.length; i += 500) {
        const chunk = rows.slice(i, i + 500)
        await rawSql(
          `${head} VALUES ${chunk.map((r) => `(${r.map(() => '?').join(', ')})`).join(', ')}`,
          ...chunk.flat(),
        )
      }
    }
    await insert(
      'INSERT INTO users (id, username, created_at)',
      ids.map((id) => [id, `bare${id}`, Date.now()]),
    )
    const now = Date.now()
    const head = 'INSERT INTO game_relationships (user_id, other_id, application_id, type, since)'
    // A has 1000 game friends: a 1001st is still made.
    await insert(
      head,
      ids.map((o) => [a.id, o, app.id, 1, now]),
    )
    expect((await game(b.bearer, 'PUT', a.id, {})).status).toBe(204)
    expect((await game(a.bearer, 'PUT', b.id, {})).status).toBe(204)
    expect((await gameTypes(a.bearer))[b.id]).toBe(1)
    // C has 999 pending: the 1000th goes, the 1001st is refused.
    await insert(
      head,
      ids.slice(1).map((o) => [c.id, o, app.id, 4, now]),
    )
    expect((await game(c.bearer, 'PUT', a.id, {})).status).toBe(204)
    const over = await game(c.bearer, 'PUT', b.id, {})
    expect([over.status, over.body.code]).toEqual([400, 30002])
  }, 20_000)
})

describe('game invites', () => {
  test('invite to the lobby one plays, the secret to the recipient alone; ask to join; expiry; blocks', async () => {
    const app = await makeApp()
    const [a, b, d] = [await gamer(app), await gamer(app), await gamer(app)]
    await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: {} })
    await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: {} })
    await game(a.bearer, 'PUT', d.id, {})
    await game(d.bearer, 'PUT', a.id, {})
    const sa = await sockets.identified(a.bearer)
    const sb = await sockets.identified(b.bearer)
    const sd = await sockets.identified(d.bearer)
    const invite = (token: string, body: Record<string, unknown>) => api('POST', '/game-invite/@me', { token, body })

    // Nothing joinable yet: refused.
    const early = await invite(a.bearer, { recipient_id: b.id })
    expect([early.status, early.body.code]).toEqual([400, 50035])
    const lobby = (await api('PUT', '/lobbies', { token: a.bearer, body: { secret: 'lobby-secret-1' } })).body
    const activity = { name: 'Game', type: 0, state: 'In lobby', party: { id: 'p1', size: [1, 4] } }
    sa.send(3, {
      status: 'online',
      since: null,
      afk: false,
      activities: [{ ...activity, secrets: { join: 'lobby-secret-1' } }],
    })
    await sb.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === a.id && f.d.activities.length === 1)

    const markA = sa.frames.length
    const sent = await invite(a.bearer, { recipient_id: b.id, content: 'come play' })
    expect(sent.status).toBe(200)
    const got = (await sb.waitFor((f) => f.t === 'GAME_INVITE_CREATE')).d
    expect(got).toEqual({
      invite_id: sent.body.invite_id,
      type: 1,
      application_id: app.id,
      application_name: expect.any(String),
      inviter_id: a.id,
      recipient_id: b.id,
      created_at: expect.stringMatching(/\+00:00$/),
      ttl: 900,
      content: 'come play',
      activity: { ...activity, application_id: app.id, secrets: { join: 'lobby-secret-1' } },
    })
    const own = (await sa.waitFor((f) => f.t === 'GAME_INVITE_CREATE', 3000, { since: markA })).d
    expect(own.activity.secrets).toBeUndefined()
    expect(JSON.stringify(sa.frames.slice(markA))).not.toContain('lobby-secret-1')
    expect((await api('GET', '/game-invite/@me', { token: a.bearer })).body[0].activity.secrets).toBeUndefined()
    expect((await api('GET', '/game-invite/@me', { token: b.bearer })).body[0].activity.secrets.join).toBe(
      'lobby-secret-1',
    )
    // Accepting is joining the lobby with the secret.
    const joined = await api('PUT', '/lobbies', { token: b.bearer, body: { secret: got.activity.secrets.join } })
    expect(joined.body.id).toBe(lobby.id)

    // Only friends (Discord-wide or in the game); someone who never authorized the game is nobody.
    const c = await gamer(app)
    expect((await invite(a.bearer, { recipient_id: c.id })).body.code).toBe(50007)
    expect((await invite(a.bearer, { recipient_id: (await makeUser()).id })).body.code).toBe(10013)
    expect((await invite(a.bearer, { recipient_id: a.id })).body.code).toBe(50007)

    // Ask to join: D (a game friend) asks A; A answers with an invite, which ends the request.
    const asked = await invite(d.bearer, { recipient_id: a.id, type: 5 })
    expect(asked.status).toBe(200)
    const request = (await sa.waitFor((f) => f.t === 'GAME_INVITE_CREATE' && f.d.type === 5)).d
    expect(request).toMatchObject({ inviter_id: d.id, recipient_id: a.id, activity: null })
    expect((await invite(a.bearer, { recipient_id: d.id, type: 5 })).body.code).toBe(50035) // D plays nothing joinable
    expect((await invite(a.bearer, { recipient_id: d.id })).status).toBe(200)
    const ended = await sd.waitFor((f) => f.t === 'GAME_INVITE_DELETE' && f.d.invite_id === request.invite_id)
    expect(ended.d).toEqual({ invite_id: request.invite_id, application_id: app.id })
    expect((await sd.waitFor((f) => f.t === 'GAME_INVITE_CREATE' && f.d.type === 1)).d.activity.secrets.join).toBe(
      'lobby-secret-1',
    )

    // ttl at its edges; an invite expires: listed by nobody, not deletable.
    for (const [ttl, status] of [
      [299, 400],
      [300, 200],
      [86_400, 200],
      [86_401, 400],
    ])
      expect((await invite(a.bearer, { recipient_id: b.id, ttl })).status).toBe(status)
    const short = await invite(a.bearer, { recipient_id: b.id, ttl: 300 })
    expect((await api('GET', '/game-invite/@me', { token: b.bearer })).body.map((i: any) => i.invite_id)).toEqual([
      short.body.invite_id, // one per sender, recipient and type: each new one replaced the last
    ])
    clock.advance(300_001)
    expect((await api('GET', '/game-invite/@me', { token: b.bearer })).body).toEqual([])
    expect((await api('DELETE', `/game-invite/@me/${short.body.invite_id}`, { token: a.bearer })).body.code).toBe(10006)
    // The housekeeping sweep deletes it.
    await sweepGameInvites()
    expect(await rawSql('SELECT id FROM game_invites WHERE id = ?', short.body.invite_id)).toEqual([])

    // Declined by the recipient; a third party cannot.
    const again = await invite(a.bearer, { recipient_id: b.id })
    expect((await api('DELETE', `/game-invite/@me/${again.body.invite_id}`, { token: d.bearer })).status).toBe(404)
    expect((await api('DELETE', `/game-invite/@me/${again.body.invite_id}`, { token: b.bearer })).status).toBe(204)
    await sa.waitFor((f) => f.t === 'GAME_INVITE_DELETE' && f.d.invite_id === again.body.invite_id)

    // A block ends the pair's invites and refuses new ones, both ways.
    const pending = await invite(d.bearer, { recipient_id: a.id, type: 5 })
    const markD = sd.frames.length
    await api('PUT', `/users/@me/relationships/${d.id}`, { token: a.token, body: { type: 2 } })
    await sd.waitFor((f) => f.t === 'GAME_INVITE_DELETE' && f.d.invite_id === pending.body.invite_id, 3000, {
      since: markD,
    })
    expect((await invite(a.bearer, { recipient_id: d.id })).body.code).toBe(50007)
    expect((await invite(d.bearer, { recipient_id: a.id, type: 5 })).body.code).toBe(50007)
  })
})
