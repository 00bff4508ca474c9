// The Gateway through the cluster's log (cluster/gateway.ts) on a real redis-server: this server's bus appends to the
// log and delivers what the log hands back, so what another node appends reaches these sockets, in sequence order,
// with the log's `s`; what happens here is in the log for the other nodes; calls (subscribe, close, change of auth
// session) from another node act on the sessions here; a Resume replays what the log delivered meanwhile. "Another
// node" is a second Redis connection appending as a node does (GatewayLog). The test server runs on SQLite: cluster
// mode proper needs PostgreSQL (tests/cluster/shared-limits.test.ts), so the node's parts are started on it directly.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { startClusterNode, type ClusterNode } from '../../src/cluster/node'
import { GatewayLog, LOG_KEY } from '../../src/cluster/log'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { audiences, topics } from '../../src/gateway/bus'
import { GatewayClient, tracked } from '../gateway-client'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'
import { type RedisServer, startRedis } from './redis'

let redis: RedisServer
let node: ClusterNode
let other: Redis
let elsewhere: GatewayLog

beforeAll(async () => {
  redis = await startRedis()
  node = await startClusterNode(redis.url)
  other = openRedis(redis.url, 'other-node')
  elsewhere = new GatewayLog(other)
})
afterAll(async () => {
  await node?.stop()
  other?.disconnect()
  redis?.stop()
})
const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

/** A lobby of the app's with one member, and that member's OAuth2 socket following it. */
async function memberOnline() {
  const { bot, players } = await setup(1, 'identify lobbies.write gateway.connect')
  const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
  const socket = await sockets.identified(players[0].bearer)
  return { bot, player: players[0], lobby, socket }
}

/** A message another node's client posted: that node appends the dispatch its store made. */
function postedElsewhere(lobbyId: string, content: string) {
  const data = JSON.stringify({ id: `${Date.now()}`, lobby_id: lobbyId, channel_id: lobbyId, content, type: 0 })
  return elsewhere.append(crypto.randomUUID(), {
    kind: 'dispatch',
    topics: [topics.lobby(lobbyId)],
    type: 'LOBBY_MESSAGE_CREATE',
    data,
  })
}

describe('dispatches go through the log', () => {
  test('a message posted here is a log entry, and reaches the socket with the log’s sequence and bytes', async () => {
    const { bot, lobby, socket } = await memberOnline()
    const before = await other.xlen(LOG_KEY)
    const posted = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: bot,
      body: { content: 'through the log' },
    })
    expect(posted.status).toBe(201)
    const got = await socket.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.content === 'through the log')
    expect(await other.xlen(LOG_KEY)).toBeGreaterThan(before)
    const [[id, fields]] = await other.xrange(LOG_KEY, `${got.s}-0`, `${got.s}-0`)
    expect(id).toBe(`${got.s}-0`)
    const frame = fields[fields.indexOf('f') + 1]
    expect(JSON.parse(frame)).toEqual(got)
    expect(fields[fields.indexOf('t') + 1].split(',')).toContain(topics.lobby(lobby.id))
  })

  test('what another node appends reaches the sockets here, in its order, none twice, with increasing s', async () => {
    const { bot, lobby, socket } = await memberOnline()
    const seqs: number[] = []
    for (let i = 0; i < 20; i++) {
      seqs.push(await postedElsewhere(lobby.id, `elsewhere ${i}`))
      if (i % 5 === 0)
        expect(
          (await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: `here ${i}` } })).status,
        ).toBe(201)
    }
    await socket.waitFor((f) => f.d?.content === 'elsewhere 19')
    const messages = socket.dispatches('LOBBY_MESSAGE_CREATE')
    const contents = messages.map((f) => f.d.content)
    expect(contents.filter((c) => c.startsWith('elsewhere'))).toEqual(
      Array.from({ length: 20 }, (_, i) => `elsewhere ${i}`),
    )
    expect(contents.filter((c) => c.startsWith('here'))).toEqual(['here 0', 'here 5', 'here 10', 'here 15'])
    const s = messages.map((f) => f.s!)
    expect(s).toEqual([...s].sort((a, b) => a - b))
    expect(new Set(s).size).toBe(s.length)
    expect(messages.filter((f) => f.d.content.startsWith('elsewhere')).map((f) => f.s)).toEqual(seqs)
  })

  test('50 parallel posts here and 50 appended elsewhere: every one arrives once, s strictly increasing', async () => {
    const { bot, lobby, socket } = await memberOnline()
    await Promise.all([
      ...Array.from({ length: 50 }, (_, i) =>
        api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: `p${i}` } }),
      ),
      ...Array.from({ length: 50 }, (_, i) => postedElsewhere(lobby.id, `e${i}`)),
    ])
    await socket.waitFor(() => socket.dispatches('LOBBY_MESSAGE_CREATE').length >= 100, 5000)
    const messages = socket.dispatches('LOBBY_MESSAGE_CREATE')
    expect(messages).toHaveLength(100)
    expect(new Set(messages.map((f) => f.d.content)).size).toBe(100)
    const s = messages.map((f) => f.s!)
    for (let i = 1; i < s.length; i++) expect(s[i]).toBeGreaterThan(s[i - 1])
  })
})

describe('session calls from another node act here', () => {
  test('subscribe-user: the user’s session here follows the topic and gets what is dispatched to it', async () => {
    const { player, socket } = await memberOnline()
    const topic = topics.lobby('999000111')
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-user',
      userId: player.id,
      topic,
      audience: audiences.account,
    })
    // An OAuth2 session does not see the account's audience: not subscribed; the lobby audience of another app neither.
    await postedElsewhere('999000111', 'not for this session')
    await socket.expectNo('LOBBY_MESSAGE_CREATE', 300)
    const user = await makeUser()
    const own = await sockets.identified(user.token)
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-user',
      userId: user.id,
      topic,
      audience: audiences.account,
    })
    await postedElsewhere('999000111', 'now followed')
    expect((await own.waitFor('LOBBY_MESSAGE_CREATE')).d.content).toBe('now followed')
  })

  test('subscribe-users / unsubscribe-users: the named users’ sessions here that see the audience follow every topic, then none', async () => {
    const [one, two, notNamed] = [await makeUser(), await makeUser(), await makeUser()]
    const { player, socket: oauth } = await memberOnline()
    const named = [await sockets.identified(one.token), await sockets.identified(two.token)]
    const bystander = await sockets.identified(notNamed.token)
    const room = [topics.lobby('999000222'), topics.lobby('999000333')]
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-users',
      userIds: ['1', one.id, two.id, player.id],
      topics: room,
      audience: audiences.guildActivity,
    })
    await postedElsewhere('999000222', 'first room')
    await postedElsewhere('999000333', 'second room')
    for (const s of named) await s.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.content === 'second room')
    for (const s of named)
      expect(s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['first room', 'second room'])
    // Not named; an OAuth2 session, which does not see guild activity: not subscribed.
    await bystander.expectNo('LOBBY_MESSAGE_CREATE', 100)
    await oauth.expectNo('LOBBY_MESSAGE_CREATE', 100)
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'unsubscribe-users',
      userIds: [one.id, two.id],
      topics: room,
    })
    await postedElsewhere('999000222', 'after leaving')
    await postedElsewhere('999000333', 'after leaving')
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-users',
      userIds: [one.id, two.id],
      topics: [topics.lobby('999000444')],
      audience: audiences.guildActivity,
    })
    await postedElsewhere('999000444', 'fence')
    for (const s of named) {
      await s.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.content === 'fence')
      expect(s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual([
        'first room',
        'second room',
        'fence',
      ])
    }
  })

  test('close-user from another node closes the socket here (4004), and it cannot resume', async () => {
    const user = await makeUser()
    const socket = await sockets.identified(user.token)
    const ready = socket.frames.find((f) => f.t === 'READY')!.d
    await elsewhere.append(crypto.randomUUID(), { kind: 'close-user', userId: user.id, code: 4004 })
    expect((await socket.waitForClose()).code).toBe(4004)
    const again = await sockets.connect()
    again.send(6, { token: user.token, session_id: ready.session_id, seq: socket.lastSeq })
    expect((await again.waitForOp(9)).d).toBe(false)
  })

  test('a logout here closes the session through the log (the entry every node applies)', async () => {
    const user = await makeUser()
    const socket = await sockets.identified(user.token)
    const before = await other.xlen(LOG_KEY)
    expect((await api('POST', '/auth/logout', { token: user.token, body: {} })).status).toBe(204)
    expect((await socket.waitForClose()).code).toBe(4004)
    const entries = await other.xrange(LOG_KEY, '-', '+')
    const kinds = entries.slice(before).map(([, fields]) => fields[fields.indexOf('k') + 1])
    expect(kinds).toContain('close-auth-session')
  })
})

describe('resume', () => {
  test('a socket that dropped resumes here and gets exactly what the log delivered meanwhile, then RESUMED', async () => {
    const { bot, player, lobby } = await memberOnline()
    const first = await GatewayClient.identified(player.bearer)
    const sessionId = first.ready.session_id
    const seen = first.client.lastSeq
    first.client.close(4000)
    await first.client.waitForClose()
    expect(
      (await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'missed here' } })).status,
    ).toBe(201)
    await postedElsewhere(lobby.id, 'missed elsewhere')
    // Wait until this node has applied the entry appended elsewhere.
    const last = await elsewhere.seq()
    while (node.gateway.consumer.applied() < last) await Bun.sleep(5)
    const again = await sockets.connect()
    again.send(6, { token: player.bearer, session_id: sessionId, seq: seen })
    await again.waitFor('RESUMED')
    const replayed = again.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)
    expect(replayed).toEqual(['missed here', 'missed elsewhere'])
    const resumed = again.frames.findIndex((f) => f.t === 'RESUMED')
    expect(again.frames.slice(resumed + 1).filter((f) => f.t === 'LOBBY_MESSAGE_CREATE')).toEqual([])
  })
})
