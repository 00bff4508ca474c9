// Presence (issue 45, part 3) on real sockets: op 3 sets status and rich presence, PRESENCE_UPDATE reaches friends
// only (never an activity's secrets), invisible looks offline, a blocked user sees nothing, READY's `presences` lists
// the friends online, the last session's end is offline, and op 3 is held to 5 per 20 s per session. Identify's
// `presence` sets the first status; a lobby's members see each other's presence (once per lobby), a block either way
// hides it, and READY's `presences` lists the lobby-mates online.
import { afterEach, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { type GatewayClient, tracked } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

type User = Awaited<ReturnType<typeof makeUser>>
async function befriend(a: User, b: User) {
  await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: {} })
  await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: {} })
}
const presenceOf = (s: GatewayClient, id: string, status?: string, since = 0) =>
  s.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === id && (!status || f.d.status === status), 3000, {
    since,
  })

const GAME = {
  name: 'Lobby Game',
  type: 0,
  state: 'In a match',
  details: 'Ranked, map 3',
  timestamps: { start: 1_700_000_000_000 },
  party: { id: 'party-1', size: [2, 4] },
  assets: { large_image: 'map3', large_text: 'Map 3' },
  secrets: { join: 'the-lobby-secret' },
}

test('friends see status and rich presence, strangers nothing, secrets never; READY lists friends online', async () => {
  const [a, b, c] = [await makeUser(), await makeUser(), await makeUser()]
  await befriend(a, b)
  const sb = await sockets.identified(b.token)
  const sc = await sockets.identified(c.token)
  const sa = await sockets.identified(a.token)
  expect((await presenceOf(sb, a.id, 'online')).d).toEqual({
    user: { id: a.id },
    status: 'online',
    activities: [],
    client_status: { desktop: 'online' },
  })

  sa.send(3, { since: null, afk: false, status: 'dnd', activities: [GAME] })
  const seen = (await presenceOf(sb, a.id, 'dnd')).d
  const { secrets: _s, ...shown } = GAME
  expect(seen.activities).toEqual([shown])
  expect(JSON.stringify(sb.frames)).not.toContain('the-lobby-secret')
  await sc.expectNo('PRESENCE_UPDATE', 150)

  // A new session of B: READY's presences has A as A shows itself.
  const fresh = await sockets.connect()
  const ready = await fresh.identify(b.token)
  expect(ready.presences).toEqual([
    { user: { id: a.id }, status: 'dnd', activities: [shown], client_status: { desktop: 'dnd' } },
  ])
  expect(JSON.stringify(ready)).not.toContain('the-lobby-secret')
  const cReady = await (await sockets.connect()).identify(c.token)
  expect(cReady.presences).toEqual([])
}, 15_000) // the file's first requests warm the server up (PostgreSQL: ~4.5 s on a busy machine)

test("a request accepted: each new friend online gets the other's presence at once; an offline one sends none", async () => {
  const [a, b, c] = [await makeUser(), await makeUser(), await makeUser()]
  const sa = await sockets.identified(a.token)
  const sb = await sockets.identified(b.token)
  const updates = (s: GatewayClient) => s.dispatches('PRESENCE_UPDATE').length
  await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: {} })
  await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: {} })
  expect((await presenceOf(sa, b.id, 'online')).d).toEqual({
    user: { id: b.id },
    status: 'online',
    activities: [],
    client_status: { desktop: 'online' },
  })
  await presenceOf(sb, a.id, 'online')
  // C has no session: B learns nothing of C on accepting (C is offline, as READY would say); a request alone tells
  // nothing either.
  const before = updates(sb)
  await api('PUT', `/users/@me/relationships/${b.id}`, { token: c.token, body: {} })
  await api('PUT', `/users/@me/relationships/${c.id}`, { token: b.token, body: {} })
  await sb.expectNo('PRESENCE_UPDATE', 150)
  expect(updates(sb)).toBe(before)
  expect(updates(sa)).toBe(1)
})

test('invisible is offline to friends; the last session ending is offline; a blocked user sees nothing', async () => {
  const [a, b] = [await makeUser(), await makeUser()]
  await befriend(a, b)
  const sb = await sockets.identified(b.token)
  const a1 = await sockets.identified(a.token)
  const a2 = await sockets.identified(a.token)
  await presenceOf(sb, a.id, 'online')

  let mark = sb.frames.length
  a1.send(3, { status: 'invisible', activities: [GAME], since: null, afk: false })
  expect((await presenceOf(sb, a.id, undefined, mark)).d).toEqual({
    user: { id: a.id },
    status: 'offline',
    activities: [],
    client_status: {},
  })
  expect((await (await sockets.connect()).identify(b.token)).presences).toEqual([])
  mark = sb.frames.length
  a1.send(3, { status: 'idle', activities: [], since: null, afk: true })
  await presenceOf(sb, a.id, 'idle', mark)

  // One of A's two sessions ends: still online. The last one: offline.
  mark = sb.frames.length
  a1.close()
  await sb.expectNo('PRESENCE_UPDATE', 300)
  a2.close()
  expect((await presenceOf(sb, a.id, 'offline', mark)).d.activities).toEqual([])
  expect((await (await sockets.connect()).identify(b.token)).presences).toEqual([])

  // A blocks B: B hears nothing of A any more, and A's READY has no presence of B.
  const a3 = await sockets.identified(a.token)
  await presenceOf(sb, a.id, 'online', mark)
  await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: { type: 2 } })
  mark = sb.frames.length
  a3.send(3, { status: 'dnd', activities: [GAME], since: null, afk: false })
  await sb.expectNo('PRESENCE_UPDATE', 300)
  expect((await (await sockets.connect()).identify(a.token)).presences).toEqual([])
})

test('op 3 is held to 5 per 20 s per session: the 6th is dropped, the socket stays', async () => {
  const [a, b] = [await makeUser(), await makeUser()]
  await befriend(a, b)
  const sb = await sockets.identified(b.token)
  const sa = await sockets.identified(a.token)
  await presenceOf(sb, a.id, 'online')
  const statuses = ['idle', 'dnd', 'idle', 'dnd', 'idle', 'dnd']
  for (const status of statuses) sa.send(3, { status, activities: [], since: null, afk: false })
  const updates = () => sb.dispatches('PRESENCE_UPDATE').filter((f) => f.d.user.id === a.id && f.d.status !== 'online')
  await sb.waitFor(() => updates().length >= 5)
  await Bun.sleep(300)
  expect(updates().map((f) => f.d.status)).toEqual(statuses.slice(0, 5))
  expect(sa.closed).toBeNull()
  // 20 s later the session may update again.
  clock.advance(20_001)
  sa.send(3, { status: 'dnd', activities: [], since: null, afk: false })
  await presenceOf(sb, a.id, 'dnd', sb.frames.length)
})

test("Identify's presence; lobby-mates see each other once per lobby, a block either way hides them, READY lists them", async () => {
  // OAuth2 sessions of the lobbies' application, without relationships.read: they see lobby-mates, not friends.
  const { bot, players } = await setup(3, 'identify lobbies.write gateway.connect')
  const [a, b, c] = players
  const members = players.map((p) => ({ id: p.id }))
  await createLobby(bot, { members })
  await createLobby(bot, { members: [{ id: a.id }, { id: b.id }] })
  const sb = await sockets.identified(b.bearer)
  const sc = await sockets.identified(c.bearer)
  const sa = await sockets.connect()
  const ready = await sa.identify(a.bearer, {
    presence: { status: 'dnd', since: null, afk: false, activities: [GAME] },
  })
  expect(ready.presences.map((p: { user: { id: string } }) => p.user.id).sort()).toEqual([b.id, c.id].sort())
  const { secrets: _s, ...shown } = GAME
  // The first status is Identify's (no "online" before it), once per lobby: B shares two with A.
  const seen = await presenceOf(sb, a.id, 'dnd')
  // A game's session sets activities of its own application.
  expect(seen.d.activities).toEqual([{ ...shown, application_id: ready.application.id }])
  await sb.waitFor(() => sb.dispatches('PRESENCE_UPDATE').filter((f) => f.d.user.id === a.id).length === 2)
  expect(
    sb
      .dispatches('PRESENCE_UPDATE')
      .filter((f) => f.d.user.id === a.id)
      .map((f) => f.d.status),
  ).toEqual(['dnd', 'dnd'])
  await presenceOf(sc, a.id, 'dnd')
  expect(JSON.stringify([sb.frames, sc.frames])).not.toContain('the-lobby-secret')

  // C blocks A: neither hears of the other; B still hears both.
  expect((await api('PUT', `/users/@me/relationships/${a.id}`, { token: c.token, body: { type: 2 } })).status).toBe(204)
  let [markB, markC, markA] = [sb.frames.length, sc.frames.length, sa.frames.length]
  sa.send(3, { status: 'idle', activities: [], since: null, afk: true })
  sc.send(3, { status: 'dnd', activities: [], since: null, afk: false })
  await presenceOf(sb, a.id, 'idle', markB)
  await presenceOf(sb, c.id, 'dnd', markB)
  await Bun.sleep(100)
  const about = (s: GatewayClient, since: number, id: string) =>
    s.frames.slice(since).filter((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === id)
  expect(about(sc, markC, a.id)).toEqual([])
  expect(about(sa, markA, c.id)).toEqual([])
  const cReady = await (await sockets.connect()).identify(c.bearer)
  expect(cReady.presences.map((p: { user: { id: string } }) => p.user.id)).toEqual([b.id])
  const bReady = await (await sockets.connect()).identify(b.bearer)
  expect(bReady.presences.find((p: { user: { id: string } }) => p.user.id === a.id).status).toBe('idle')

  // Invisible is offline to lobby-mates; a user outside the lobbies hears nothing.
  const stranger = await sockets.identified((await makeUser()).token)
  markB = sb.frames.length
  sa.send(3, { status: 'invisible', activities: [], since: null, afk: false })
  expect((await presenceOf(sb, a.id, undefined, markB)).d.status).toBe('offline')
  await stranger.expectNo('PRESENCE_UPDATE', 100)

  // Joining a lobby: the newcomer and its members online see each other at once; across a block, neither.
  const third = await createLobby(bot, { members: [{ id: c.id }] })
  ;[markB, markC, markA] = [sb.frames.length, sc.frames.length, sa.frames.length]
  expect((await api('PUT', `/lobbies/${third.id}/members/${b.id}`, { token: bot, body: {} })).status).toBe(200)
  expect((await presenceOf(sc, b.id, undefined, markC)).d.status).toBe('online')
  expect((await presenceOf(sb, c.id, undefined, markB)).d.status).toBe('dnd')
  await api('PUT', `/lobbies/${third.id}/members/${a.id}`, { token: bot, body: {} })
  await sa.waitFor((f) => f.t === 'LOBBY_CREATE' && f.d.id === third.id, 3000, { since: markA })
  await presenceOf(sa, b.id, undefined, markA) // A (invisible) still sees B; C and A see nothing of each other
  expect(about(sa, markA, c.id)).toEqual([])
  expect(about(sc, markC, a.id)).toEqual([])
}, 10_000)
