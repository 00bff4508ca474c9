// Relationships (issue 45, part 1) on real sockets: a friend request by username and by id, accepted, renamed,
// removed, declined and cancelled, with RELATIONSHIP_ADD / UPDATE / REMOVE on both users' sessions and READY's
// `relationships`; blocks in every direction; who may call (users, OAuth2 scopes, provisional accounts; not bots);
// the caps at their edges (Discord's 1000 friends, the pending requests), and parallel accepts that make one friendship.
import { afterEach, describe, expect, test } from 'bun:test'
import { type GatewayClient, tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { rawSql } from '../db/raw'
import { authorizeCode, bearerFor, REDIRECT, tokenRequest } from '../oauth2/helpers'
import { player } from '../provisional/helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

const rel = (token: string, method: string, id: string, body?: unknown) =>
  api(method, `/users/@me/relationships/${id}`, { token, body })
const list = async (token: string) => (await api('GET', '/users/@me/relationships', { token })).body
const types = async (token: string) =>
  Object.fromEntries((await list(token)).map((r: { id: string; type: number }) => [r.id, r.type]))

/** The next dispatch of this type about `id` on the socket, after the frames already seen. */
const next = (s: GatewayClient, type: string, id: string, since = 0) =>
  s.waitFor((f) => f.t === type && f.d.id === id, 3000, { since })

describe('a friendship from request to removal', () => {
  test('request by username, accept by id, nickname, READY, removal: events on both sides', async () => {
    const a = await makeUser()
    const b = await makeUser()
    const sa = await sockets.identified(a.token)
    const sb = await sockets.identified(b.token)

    const sent = await api('POST', '/users/@me/relationships', { token: a.token, body: { username: b.username } })
    expect(sent.status).toBe(204)
    const out = await next(sa, 'RELATIONSHIP_ADD', b.id)
    expect(out.d).toMatchObject({ id: b.id, type: 4, nickname: null, should_notify: false, user: { id: b.id } })
    expect(out.d.user.username).toBe(b.username)
    const inc = await next(sb, 'RELATIONSHIP_ADD', a.id)
    expect(inc.d).toMatchObject({ id: a.id, type: 3, should_notify: true, user: { id: a.id, username: a.username } })
    expect(Date.parse(inc.d.since)).toBeGreaterThan(Date.now() - 60_000)

    const listed = await list(a.token)
    expect(listed).toEqual([
      {
        id: b.id,
        type: 4,
        user: expect.objectContaining({ id: b.id, username: b.username, bot: false }),
        nickname: null,
        is_spam_request: false,
        user_ignored: false,
        since: expect.stringMatching(/\+00:00$/),
      },
    ])
    // Sending again is no change; the request stays one.
    const seenA = sa.frames.length
    expect((await rel(a.token, 'PUT', b.id, {})).status).toBe(204)
    await sa.expectNo('RELATIONSHIP_ADD', 150)
    expect(sa.frames.length).toBe(seenA)

    // B accepts with a PUT on the incoming request.
    const seenB = sb.frames.length
    expect((await rel(b.token, 'PUT', a.id, {})).status).toBe(204)
    expect((await next(sa, 'RELATIONSHIP_ADD', b.id, seenA)).d).toMatchObject({ type: 1, should_notify: false })
    expect((await next(sb, 'RELATIONSHIP_ADD', a.id, seenB)).d).toMatchObject({ type: 1 })
    expect(await types(a.token)).toEqual({ [b.id]: 1 })
    expect(await types(b.token)).toEqual({ [a.id]: 1 })
    // Asking again by name: Discord's 80007.
    const again = await api('POST', '/users/@me/relationships', { token: a.token, body: { username: b.username } })
    expect(again.status).toBe(400)
    expect(again.body.code).toBe(80007)

    // A nickname for a friend: RELATIONSHIP_UPDATE to A only.
    expect((await rel(a.token, 'PATCH', b.id, { nickname: 'Duo' })).status).toBe(204)
    expect((await next(sa, 'RELATIONSHIP_UPDATE', b.id)).d).toMatchObject({ id: b.id, type: 1, nickname: 'Duo' })
    await sb.expectNo('RELATIONSHIP_UPDATE', 100)
    expect((await list(a.token))[0].nickname).toBe('Duo')
    expect((await list(b.token))[0].nickname).toBeNull()

    // A new session's READY has them.
    const fresh = await sockets.connect()
    const ready = await fresh.identify(a.token)
    expect(ready.relationships).toEqual([expect.objectContaining({ id: b.id, type: 1, nickname: 'Duo' })])

    // Removal by either side: both rows go, both told.
    const seen = sb.frames.length
    expect((await rel(b.token, 'DELETE', a.id)).status).toBe(204)
    expect((await next(sa, 'RELATIONSHIP_REMOVE', b.id)).d).toMatchObject({ id: b.id, type: 1 })
    expect((await next(sb, 'RELATIONSHIP_REMOVE', a.id, seen)).d).toMatchObject({ id: a.id, type: 1 })
    expect(await list(a.token)).toEqual([])
    expect(await list(b.token)).toEqual([])
    // Nothing left to delete: still 204, no event.
    expect((await rel(b.token, 'DELETE', a.id)).status).toBe(204)
  }, 15_000)

  test('decline and cancel remove the request on both sides', async () => {
    const [a, b] = [await makeUser(), await makeUser()]
    await rel(a.token, 'PUT', b.id, {})
    expect((await rel(b.token, 'DELETE', a.id)).status).toBe(204) // decline
    expect(await list(a.token)).toEqual([])
    await rel(a.token, 'PUT', b.id)
    expect(await types(b.token)).toEqual({ [a.id]: 3 })
    expect((await rel(a.token, 'DELETE', b.id)).status).toBe(204) // cancel
    expect(await list(b.token)).toEqual([])
    // Requests crossing (each sends to the other) make a friendship.
    await rel(a.token, 'PUT', b.id, { type: 1 })
    await rel(b.token, 'PUT', a.id, { type: -1 })
    expect(await types(a.token)).toEqual({ [b.id]: 1 })
  })

  test("bad input: Discord's codes and form errors", async () => {
    const [a, b] = [await makeUser(), await makeUser()]
    const unknownName = await api('POST', '/users/@me/relationships', {
      token: a.token,
      body: { username: 'nobody-by-this-name' },
    })
    expect(unknownName.status).toBe(400)
    expect(unknownName.body).toEqual({ code: 80004, message: 'No users with DiscordTag exist' })
    const self = await rel(a.token, 'PUT', a.id, {})
    expect([self.status, self.body.code]).toEqual([400, 80003])
    const selfByName = await api('POST', '/users/@me/relationships', { token: a.token, body: { username: a.username } })
    expect(selfByName.body.code).toBe(80003)
    expect((await rel(a.token, 'PUT', '123456789012345678', {})).body.code).toBe(10013)
    expect((await rel(a.token, 'PUT', 'nope', {})).status).toBe(404)
    const badType = await rel(a.token, 'PUT', b.id, { type: 3 })
    expect([badType.status, badType.body.code]).toEqual([400, 50035])
    expect(badType.body.errors.type).toBeDefined()
    const notFriend = await rel(a.token, 'PATCH', b.id, { nickname: 'x' })
    expect([notFriend.status, notFriend.body.code]).toEqual([400, 80006])
    await rel(a.token, 'PUT', b.id)
    await rel(b.token, 'PUT', a.id)
    const long = await rel(a.token, 'PATCH', b.id, { nickname: 'x'.repeat(33) })
    expect([long.status, long.body.code]).toEqual([400, 50035])
    expect((await rel(a.token, 'PATCH', b.id, { nickname: 'x'.repeat(32) })).status).toBe(204)
    expect((await rel(a.token, 'PATCH', b.id, { nickname: null })).status).toBe(204)
    expect((await list(a.token))[0].nickname).toBeNull()
    const noName = await api('POST', '/users/@me/relationships', { token: a.token, body: {} })
    expect([noName.status, noName.body.code]).toEqual([400, 50035])
  })
})

describe('blocks', () => {
  test('a block ends a friendship; the blocked cannot ask again; unblocking leaves the other side alone', async () => {
    const [a, b] = [await makeUser(), await makeUser()]
    await rel(a.token, 'PUT', b.id)
    await rel(b.token, 'PUT', a.id)
    const sa = await sockets.identified(a.token)
    const sb = await sockets.identified(b.token)

    expect((await rel(a.token, 'PUT', b.id, { type: 2 })).status).toBe(204)
    expect((await next(sb, 'RELATIONSHIP_REMOVE', a.id)).d).toMatchObject({ type: 1 })
    expect((await next(sa, 'RELATIONSHIP_REMOVE', b.id)).d).toMatchObject({ type: 1 })
    expect((await next(sa, 'RELATIONSHIP_ADD', b.id)).d).toMatchObject({ type: 2, user: { id: b.id } })
    await sb.expectNo('RELATIONSHIP_ADD', 100) // the blocked user is not told of the block
    expect(await types(a.token)).toEqual({ [b.id]: 2 })
    expect(await list(b.token)).toEqual([])

    // B cannot ask A, by id or by name (the same answer as requests turned off); A is not told.
    expect((await rel(b.token, 'PUT', a.id, {})).body.code).toBe(80000)
    const byName = await api('POST', '/users/@me/relationships', { token: b.token, body: { username: a.username } })
    expect([byName.status, byName.body.code]).toEqual([400, 80000])
    await sa.expectNo('RELATIONSHIP_ADD', 100)
    // B may block A too; A unblocking leaves B's block, and A still cannot ask B.
    expect((await rel(b.token, 'PUT', a.id, { type: 2 })).status).toBe(204)
    expect((await rel(a.token, 'DELETE', b.id)).status).toBe(204)
    expect((await next(sa, 'RELATIONSHIP_REMOVE', b.id, 0)).d).toBeDefined()
    expect(await list(a.token)).toEqual([])
    expect(await types(b.token)).toEqual({ [a.id]: 2 })
    expect((await rel(a.token, 'PUT', b.id, {})).body.code).toBe(80000)
    // Blocking twice is one block.
    expect((await rel(b.token, 'PUT', a.id, { type: 2 })).status).toBe(204)
    expect(await types(b.token)).toEqual({ [a.id]: 2 })
  })

  test('a block ends pending requests both ways; a request from the blocker lifts its block', async () => {
    const [a, b, c] = [await makeUser(), await makeUser(), await makeUser()]
    await rel(a.token, 'PUT', b.id) // a -> b pending
    await rel(c.token, 'PUT', a.id) // c -> a pending
    expect((await rel(b.token, 'PUT', a.id, { type: 2 })).status).toBe(204) // the receiver blocks the sender
    expect((await rel(a.token, 'PUT', c.id, { type: 2 })).status).toBe(204) // the receiver blocks... the other way
    expect(await types(a.token)).toEqual({ [c.id]: 2 })
    expect(await types(b.token)).toEqual({ [a.id]: 2 })
    expect(await list(c.token)).toEqual([])
    // A asks C, whom A blocked: the block becomes an outgoing request.
    expect((await rel(a.token, 'PUT', c.id, {})).status).toBe(204)
    expect(await types(a.token)).toEqual({ [c.id]: 4 })
    expect(await types(c.token)).toEqual({ [a.id]: 3 })
    // A bot cannot be asked, but can be blocked.
    const app = await makeApp()
    const botUser = (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body.id
    expect((await rel(a.token, 'PUT', botUser, {})).body.code).toBe(80000)
    expect((await rel(a.token, 'PUT', botUser, { type: 2 })).status).toBe(204)
  })
})

describe('who may call', () => {
  test('bots get 20001; OAuth2 needs relationships.read / .write; a provisional account uses them all', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const bot = await api('GET', '/users/@me/relationships', { token: `Bot ${app.bot_token}` })
    expect([bot.status, bot.body.code]).toEqual([403, 20001])
    expect((await rel(`Bot ${app.bot_token}`, 'PUT', user.id, {})).body.code).toBe(20001)
    expect((await api('GET', '/users/@me/relationships')).status).toBe(401)

    const identifyOnly = await bearerFor(user, app, 'identify gateway.connect')
    expect((await api('GET', '/users/@me/relationships', { token: identifyOnly })).status).toBe(403)
    const reader = await bearerFor(user, app, 'identify relationships.read gateway.connect')
    expect((await api('GET', '/users/@me/relationships', { token: reader })).status).toBe(200)
    const write = await rel(reader, 'PUT', '123456789012345678', {})
    expect([write.status, write.body.code]).toEqual([403, 50001])

    // A provisional player (sdk.social_layer) befriends the full account; its socket and the reader's hear it.
    const guest = await player(app, 'friendly-guest', 'Friendly Guest')
    const gs = await sockets.identified(guest.bearer)
    const rs = await sockets.identified(reader)
    const is = await sockets.identified(identifyOnly)
    expect((await rel(guest.bearer, 'PUT', user.id, {})).status).toBe(204)
    expect((await next(gs, 'RELATIONSHIP_ADD', user.id)).d.type).toBe(4)
    expect((await next(rs, 'RELATIONSHIP_ADD', guest.id)).d).toMatchObject({ type: 3, user: { id: guest.id } })
    await is.expectNo('RELATIONSHIP_ADD', 150) // an OAuth2 session without relationships.read hears nothing
    expect((await rel(user.token, 'PUT', guest.id, {})).status).toBe(204)
    expect((await next(gs, 'RELATIONSHIP_ADD', user.id, 1)).d).toBeDefined()
    expect(await types(guest.bearer)).toEqual({ [user.id]: 1 })
    const fresh = await sockets.connect()
    expect((await fresh.identify(guest.bearer)).relationships).toEqual([
      expect.objectContaining({ id: user.id, type: 1 }),
    ])
    const noRead = await sockets.connect()
    expect((await noRead.identify(identifyOnly)).relationships).toBeUndefined()
  })
})

describe('limits and races', () => {
  /** Rows inserted with multi-row statements (a few round trips on PostgreSQL, not one per row). */
  async function insertRows(head: string, rows: unknown[][]): Promise<void> {
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500)
      const values = chunk.map((r) => `(${r.map(() => '?').join(', ')})`).join(', ')
      await rawSql(`${head} VALUES ${values}`, ...chunk.flat())
    }
  }

  /** `n` bare users (no password to hash), their ids. */
  async function bareUsers(n: number): Promise<string[]> {
    const base = (BigInt(Date.now() - 1420070400000) << 22n) + BigInt(Math.floor(Math.random() * 1e6)) * 4096n
    const ids = Array.from({ length: n }, (_, i) => String(base + BigInt(i)))
    await insertRows(
      'INSERT INTO users (id, username, created_at)',
      ids.map((id) => [id, `bare${id}`, Date.now()]),
    )
    return ids
  }

  test("1000 friends (Discord's cap) and the pending requests' cap, at their edges", async () => {
    const [a, b, c] = [await makeUser(), await makeUser(), await makeUser()]
    const others = await bareUsers(999)
    const now = Date.now()
    await insertRows(
      'INSERT INTO relationships (user_id, other_id, type, since)',
      others.flatMap((o) => [
        [a.id, o, 1, now],
        [o, a.id, 1, now],
      ]),
    )
    // 999 friends: B's request goes out, its acceptance makes the 1000th.
    expect((await rel(b.token, 'PUT', a.id, {})).status).toBe(204)
    expect((await rel(c.token, 'PUT', a.id, {})).status).toBe(204)
    expect((await rel(a.token, 'PUT', b.id, {})).status).toBe(204)
    // The 1001st: A can neither accept C nor ask anyone; C's request stays pending.
    const full = await rel(a.token, 'PUT', c.id, {})
    expect([full.status, full.body.code]).toEqual([400, 30002])
    expect((await types(c.token))[a.id]).toBe(4)
    const d = await makeUser()
    expect((await rel(a.token, 'PUT', d.id, {})).body.code).toBe(30002)
    // A friend removed makes room again.
    await rel(a.token, 'DELETE', b.id)
    expect((await rel(a.token, 'PUT', c.id, {})).status).toBe(204)

    // Pending outgoing requests: D has 999, the 1000th goes, the 1001st is refused.
    await insertRows(
      'INSERT INTO relationships (user_id, other_id, type, since)',
      others.map((o) => [d.id, o, 4, now]),
    )
    expect((await rel(d.token, 'PUT', b.id, {})).status).toBe(204)
    const over = await rel(d.token, 'PUT', c.id, {})
    expect([over.status, over.body.code]).toEqual([400, 30002])
    expect(over.body.message).toContain('pending')
  }, 30_000)

  test('50 parallel accepts (and 50 crossing requests) make one friendship, told once', async () => {
    const [a, b] = [await makeUser(), await makeUser()]
    await rel(a.token, 'PUT', b.id)
    const sa = await sockets.identified(a.token)
    const answers = await Promise.all(Array.from({ length: 50 }, () => rel(b.token, 'PUT', a.id, {})))
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(204))
    await next(sa, 'RELATIONSHIP_ADD', b.id)
    await Bun.sleep(200)
    expect(sa.dispatches('RELATIONSHIP_ADD').filter((f) => f.d.id === b.id)).toHaveLength(1)
    const rows = await rawSql(
      'SELECT user_id, type FROM relationships WHERE (user_id = ? AND other_id = ?) OR (user_id = ? AND other_id = ?)',
      a.id,
      b.id,
      b.id,
      a.id,
    )
    expect(rows.map((r) => Number(r.type))).toEqual([1, 1])

    const [c, e] = [await makeUser(), await makeUser()]
    const crossing = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? rel(c.token, 'PUT', e.id, {}) : rel(e.token, 'PUT', c.id, {}))),
    )
    expect(crossing.map((r) => r.status)).toEqual(Array(50).fill(204))
    expect(await types(c.token)).toEqual({ [e.id]: 1 })
    expect(await types(e.token)).toEqual({ [c.id]: 1 })
  }, 30_000)
})

describe('a provisional account merged into a full account', () => {
  test('the full account takes its friends, requests and blocks; what it had already stays', async () => {
    const app = await makeApp()
    const guest = await player(app, 'merging-guest')
    const [full, friend, asker, blocked, both] = [
      await makeUser(),
      await makeUser(),
      await makeUser(),
      await makeUser(),
      await makeUser(),
    ]
    const put = (token: string, id: string, body: unknown = {}) => rel(token, 'PUT', id, body)
    await put(guest.bearer, friend.id)
    await put(friend.token, guest.id)
    await rel(guest.bearer, 'PATCH', friend.id, { nickname: 'Old pal' })
    await put(asker.token, guest.id) // an incoming request of the guest
    await put(guest.bearer, blocked.id, { type: 2 })
    await put(guest.bearer, both.id) // the guest's request to a user the full account already blocks
    await put(full.token, both.id, { type: 2 })
    await put(guest.bearer, full.id) // the two accounts' own request goes
    // A game friend of the guest (issue 45 part 2) moves to the full account too.
    const gamer = await bearerFor(friend, app, 'identify relationships.read relationships.write')
    await api('PUT', `/users/@me/game-relationships/${friend.id}`, { token: guest.bearer, body: {} })
    await api('PUT', `/users/@me/game-relationships/${guest.id}`, { token: gamer, body: {} })
    const sf = await sockets.identified(friend.token)

    const code = await authorizeCode(full, app, { scope: 'identify' })
    const merged = await tokenRequest(
      '/oauth2/token',
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
        external_auth_token: guest.token.access_token,
      },
      [app.id, app.client_secret],
    )
    expect(merged.status).toBe(200)
    expect(await types(full.token)).toEqual({ [friend.id]: 1, [asker.id]: 3, [blocked.id]: 2, [both.id]: 2 })
    expect((await list(full.token)).find((r: { id: string }) => r.id === friend.id).nickname).toBe('Old pal')
    expect(await types(friend.token)).toEqual({ [full.id]: 1 })
    expect(await types(asker.token)).toEqual({ [full.id]: 4 })
    expect(await list(both.token)).toEqual([])
    expect((await next(sf, 'RELATIONSHIP_REMOVE', guest.id)).d.type).toBe(1)
    expect((await next(sf, 'RELATIONSHIP_ADD', full.id)).d).toMatchObject({ type: 1, user: { id: full.id } })
    expect((await next(sf, 'GAME_RELATIONSHIP_REMOVE', guest.id)).d.application_id).toBe(app.id)
    expect((await next(sf, 'GAME_RELATIONSHIP_ADD', full.id)).d).toMatchObject({ type: 1, application_id: app.id })
    const gameOf = async (token: string) =>
      (await api('GET', '/users/@me/game-relationships', { token })).body.map((r: any) => [r.id, r.type])
    expect(await gameOf(full.token)).toEqual([[friend.id, 1]])
    expect(await gameOf(gamer)).toEqual([[full.id, 1]])
    const rows = await rawSql(
      'SELECT COUNT(*) AS n FROM relationships WHERE user_id = ? OR other_id = ?',
      guest.id,
      guest.id,
    )
    expect(Number(rows[0].n)).toBe(0)
    const gameRows = await rawSql(
      'SELECT COUNT(*) AS n FROM game_relationships WHERE user_id = ? OR other_id = ?',
      guest.id,
      guest.id,
    )
    expect(Number(gameRows[0].n)).toBe(0)
  }, 15_000)
})
