// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Three nodes behind one address, as an operator runs them: three `bun src/main.ts` processes with DATABASE_URL (one
// PostgreSQL database) and REDIS_URL (one redis-server), both started here from Debian's packages (tests/db/postgres.ts,
// tests/cluster/redis.ts). What one node does reaches the sockets on the others through the Gateway's log, a logout
// on one ends the session's sockets and token on the others, the security limits count across them, and when a node
// is killed its clients resume on another with exactly what they missed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import type { Served } from '../ops/process-helpers'
import { call, present, startTestCluster, type TestCluster } from './harness'

let cluster: TestCluster
let nodes: Served[]
let database: TestCluster['database']
let redis: TestCluster['redis']

beforeAll(async () => {
  if (!present) return
  cluster = await startTestCluster(3)
  ;({ nodes, database, redis } = cluster)
}, 60_000)
// Nodes drain before they exit (SIGTERM): on a loaded machine that outlasts the hooks' default 5 s.
afterAll(async () => {
  await cluster?.stop()
}, 30_000)

const newUser = () => cluster.newUser()
const newApp = () => cluster.newApp()
const socketOn = (node: Served, token: string) => cluster.socketOn(node, token)

describe.skipIf(!present)('three nodes on PostgreSQL and Redis', () => {
  test('each node holds its own snowflake id; lobby messages posted through B reach members on A and C in one order', async () => {
    const [a, b, c] = nodes
    const app = await newApp()
    const [u1, u2] = [await newUser(), await newUser()]
    const lobby = await call(b, 'POST', '/lobbies', app.bot, { members: [{ id: u1.id }, { id: u2.id }] })
    expect(lobby.status).toBe(201)
    const onA = await socketOn(a, u1.token)
    const onC = await socketOn(c, u2.token)
    for (let i = 0; i < 30; i++)
      expect((await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: `m${i}` })).status).toBe(
        201,
      )
    await onA.client.waitFor((f) => f.d?.content === 'm29', 5000)
    await onC.client.waitFor((f) => f.d?.content === 'm29', 5000)
    const seen = (s: GatewayClient) => s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => [f.s, f.d.content])
    expect(seen(onA.client)).toEqual(seen(onC.client))
    expect(seen(onA.client).map(([, content]) => content)).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`))
    // Ids minted on different nodes carry different node bits.
    const ids = await Promise.all(
      nodes.map((n) => call(n, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'id' })),
    )
    const bits = ids.map((r) => Number((BigInt(r.body.id) >> 12n) & 0x3ffn))
    expect(new Set(bits).size).toBe(3)
  }, 60_000)

  test('a logout through A closes the session’s socket on C (4004) and its token fails on C', async () => {
    const [a, , c] = nodes
    const user = await newUser()
    expect((await call(c, 'GET', '/users/@me', user.token)).status).toBe(200) // cached on C now
    const onC = await socketOn(c, user.token)
    expect((await call(a, 'POST', '/auth/logout', user.token, {})).status).toBe(204)
    expect((await onC.client.waitForClose()).code).toBe(4004)
    let status = 0
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (await call(c, 'GET', '/users/@me', user.token)).status
      if (status !== 401) await Bun.sleep(10)
    }
    expect(status).toBe(401)
  }, 60_000)

  test('a lobby changed through A is what C answers next (its cached lobby and members forgotten there too)', async () => {
    const [a, , c] = nodes
    const app = await newApp()
    const [u1, u2] = [await newUser(), await newUser()]
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: u1.id }], metadata: { round: '1' } })
    expect((await call(c, 'GET', `/lobbies/${lobby.body.id}`, app.bot)).body.metadata).toEqual({ round: '1' }) // cached on C
    expect((await call(a, 'PATCH', `/lobbies/${lobby.body.id}`, app.bot, { metadata: { round: '2' } })).status).toBe(
      200,
    )
    expect((await call(a, 'PUT', `/lobbies/${lobby.body.id}/members/${u2.id}`, app.bot, {})).status).toBe(200)
    let seen: any
    for (let i = 0; i < 100; i++) {
      seen = (await call(c, 'GET', `/lobbies/${lobby.body.id}`, app.bot)).body
      if (seen.metadata?.round === '2' && seen.members.length === 2) break
      await Bun.sleep(10)
    }
    expect(seen.metadata).toEqual({ round: '2' })
    expect(seen.members.map((m: any) => m.id).sort()).toEqual([u1.id, u2.id].sort())
  }, 60_000)

  test('30 parallel wrong passwords for one account spread over the three nodes: 10 reach the check, 20 get 429', async () => {
    const user = await newUser()
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(nodes[i % 3], 'POST', '/auth/login', undefined, { login: user.email, password: 'not the passphrase' }),
      ),
    )
    expect(answers.filter((r) => r.status === 400)).toHaveLength(10)
    expect(answers.filter((r) => r.status === 429)).toHaveLength(20)
  }, 60_000)

  test('a node restarting leaves the other nodes’ state alone: a lobby with a member online elsewhere keeps no countdown', async () => {
    const [a] = nodes
    const app = await newApp()
    const user = await newUser()
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
    await socketOn(a, user.token)
    const deadline = async () =>
      (await database.sql`SELECT idle_deadline FROM lobbies WHERE id = ${lobby.body.id}`)[0].idle_deadline
    for (let i = 0; i < 100 && (await deadline()) !== null; i++) await Bun.sleep(10)
    expect(await deadline()).toBeNull() // its member is online (on A)
    await nodes[1].stop()
    nodes[1] = await cluster.start()
    expect(await deadline()).toBeNull()
    // The new node loaded who is online elsewhere: a message through it keeps the countdown off.
    expect(
      (await call(nodes[1], 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'hi' })).status,
    ).toBe(201)
    expect(await deadline()).toBeNull()
  }, 60_000)

  test('a member online on A keeps the lobby active for a message posted through C (who is online is shared)', async () => {
    const [a, , c] = nodes
    const app = await newApp()
    const user = await newUser()
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
    const deadline = async () =>
      (await database.sql`SELECT idle_deadline FROM lobbies WHERE id = ${lobby.body.id}`)[0].idle_deadline
    expect(await deadline()).not.toBeNull() // nobody online yet: counting down
    const onA = await socketOn(a, user.token)
    for (let i = 0; i < 100 && (await deadline()) !== null; i++) await Bun.sleep(10)
    expect(await deadline()).toBeNull()
    await Bun.sleep(50) // C hears of the session through the log
    expect((await call(c, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'via C' })).status).toBe(
      201,
    )
    expect(await deadline()).toBeNull()
    // The member leaves (its session ends): a message through C starts the countdown.
    onA.client.close(1000)
    await onA.client.waitForClose()
    await Bun.sleep(50)
    expect((await call(c, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'again' })).status).toBe(
      201,
    )
    expect(await deadline()).not.toBeNull()
  }, 60_000)

  test('SIGKILL of redis-server and a restart on its files: sockets stay, delivery goes on after it, no gap, no duplicate', async () => {
    const [a, b] = nodes
    const app = await newApp()
    const user = await newUser()
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
    const onA = await socketOn(a, user.token)
    for (let i = 0; i < 10; i++)
      expect((await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: `m${i}` })).status).toBe(
        201,
      )
    await onA.client.waitFor((f) => f.d?.content === 'm9', 5000)
    redis.kill()
    await Bun.sleep(300)
    await redis.restart()
    // The nodes reconnect by themselves; a post may fail to reach the log until they have.
    let sent = 10
    for (let tries = 0; tries < 100 && onA.client.dispatches('LOBBY_MESSAGE_CREATE').length < 11; tries++) {
      await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: `m${sent++}` })
      await Bun.sleep(50)
    }
    for (let i = 0; i < 10; i++)
      expect(
        (await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: `after ${i}` })).status,
      ).toBe(201)
    await onA.client.waitFor((f) => f.d?.content === 'after 9', 10_000)
    expect(onA.client.closed).toBeNull()
    const frames = onA.client.dispatches('LOBBY_MESSAGE_CREATE')
    const s = frames.map((f) => f.s!)
    for (let i = 1; i < s.length; i++) expect(s[i]).toBeGreaterThan(s[i - 1])
    const contents = frames.map((f) => f.d.content)
    expect(new Set(contents).size).toBe(contents.length)
    expect(contents.slice(0, 10)).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`))
    expect(contents.slice(-10)).toEqual(Array.from({ length: 10 }, (_, i) => `after ${i}`))
  }, 60_000)

  test('SIGKILL of the node holding a socket: the client resumes on another node with exactly the messages it missed', async () => {
    const [a, b, c] = nodes
    const app = await newApp()
    const user = await newUser()
    const lobby = await call(b, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
    const onC = await socketOn(c, user.token)
    expect((await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'before' })).status).toBe(
      201,
    )
    await onC.client.waitFor((f) => f.d?.content === 'before', 5000)
    const seq = onC.client.lastSeq!
    c.proc.kill('SIGKILL')
    await c.proc.exited
    for (let i = 0; i < 25; i++)
      expect(
        (await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: `missed ${i}` })).status,
      ).toBe(201)
    const again = await cluster.connect(a)
    again.send(6, { token: user.token, session_id: onC.ready.session_id, seq })
    await again.waitFor('RESUMED', 5000)
    const replayed = again.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)
    expect(replayed).toEqual(Array.from({ length: 25 }, (_, i) => `missed ${i}`))
    // And it goes on live there.
    expect((await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'live' })).status).toBe(201)
    await again.waitFor((f) => f.d?.content === 'live', 5000)
  }, 60_000)
})
