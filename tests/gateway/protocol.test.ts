import { afterEach, describe, expect, test } from 'bun:test'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { sha256Hex, randomToken } from '../../src/core/crypto'
import { snowflake } from '../../src/core/snowflake'
import { write } from '../../src/db/client'
import { audiences, events, onOpcode, topics, wiring } from '../../src/gateway/bus'
import { oauth2Tokens } from '../../src/oauth2/tables'
import { tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})
const connect = sockets.connect
async function identified(token: string) {
  const c = await connect()
  const ready = await c.identify(token)
  return { c, ready }
}

async function bearerToken(appId: string, userId: string, scopes = 'identify') {
  await server()
  const token = randomToken()
  await write((w) =>
    w
      .insert(oauth2Tokens)
      .values({
        id: snowflake(),
        applicationId: appId,
        userId,
        scopes,
        accessTokenHash: sha256Hex(token),
        familyId: snowflake(),
        expiresAt: Date.now() + 3600_000,
        createdAt: Date.now(),
      } as any)
      .run(),
  )
  return token
}

describe('REST', () => {
  test('GET /gateway gives a URL without query string, no token needed', async () => {
    const { port } = await server()
    const r = await api('GET', '/gateway')
    expect(r.status).toBe(200)
    expect(r.body.url).toBe(`ws://127.0.0.1:${port}/gateway`.replace('127.0.0.1', new URL(r.body.url).hostname))
    expect(r.body.url).not.toContain('?')
  })

  test('GET /api/v10/gateway/bot needs a bot token and gives sharding info', async () => {
    const app = await makeApp()
    const r = await api('GET', '/api/v10/gateway/bot', { token: `Bot ${app.bot_token}` })
    expect(r.status).toBe(200)
    expect(r.body.shards).toBeGreaterThanOrEqual(1)
    expect(r.body.session_start_limit.max_concurrency).toBeGreaterThanOrEqual(1)
    expect(Object.keys(r.body.session_start_limit).sort()).toEqual([
      'max_concurrency',
      'remaining',
      'reset_after',
      'total',
    ])
    expect((await api('GET', '/api/v10/gateway/bot')).status).toBe(401)
  })
})

describe('handshake', () => {
  test('Hello carries heartbeat_interval and null s/t', async () => {
    const c = await connect()
    expect(c.hello).toMatchObject({ op: 10, s: null, t: null })
    expect(c.hello.d.heartbeat_interval).toBe(config().gatewayHeartbeatMs)
  })

  test('READY for a user session', async () => {
    const user = await makeUser()
    const { ready, c } = await identified(user.token)
    expect(ready.v).toBe(10)
    expect(ready.user.id).toBe(user.id)
    expect(ready.user.bot).toBe(false)
    expect(ready.session_type).toBe('normal')
    expect(ready.session_id).toMatch(/^[0-9a-f]{32}$/)
    expect(ready.resume_gateway_url).not.toContain('?')
    expect(ready.guilds).toEqual([])
    expect(ready.application).toBeUndefined()
    const sessions = (await import('../../src/accounts/sessions')).listSessions
    const rows = await sessions(user.id)
    expect(ready.auth_session_id_hash).toBe(rows[0].idHash)
    expect(c.dispatches('READY')[0].s).toBeGreaterThan(0)
  })

  test('READY for a bot, with a bare token and with Bot prefix', async () => {
    const app = await makeApp()
    for (const token of [app.bot_token, `Bot ${app.bot_token}`]) {
      const { ready } = await identified(token)
      expect(ready.user.bot).toBe(true)
      expect(ready.application).toEqual({ id: app.id, flags: 0 })
      expect(ready.auth_session_id_hash).toBeUndefined()
    }
  })

  test('READY for an OAuth2 bearer token', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const token = await bearerToken(app.id, user.id, 'identify lobbies.write gateway.connect')
    const { ready } = await identified(`Bearer ${token}`)
    expect(ready.session_type).toBe('oauth')
    expect(ready.user.id).toBe(user.id)
    expect(ready.application.id).toBe(app.id)
    expect(ready.scopes).toEqual(['identify', 'lobbies.write', 'gateway.connect'])
  })

  test('a bearer token without gateway.connect (or identify) is refused with 4004', async () => {
    const app = await makeApp()
    const user = await makeUser()
    for (const scope of ['identify lobbies.write', 'gateway.connect']) {
      const c = await connect()
      c.send(2, { token: `Bearer ${await bearerToken(app.id, user.id, scope)}`, properties: {}, intents: 0 })
      expect((await c.waitForClose()).code).toBe(4004)
    }
  })

  test('Identify accepts properties, intents, shard, compress false and capabilities', async () => {
    const user = await makeUser()
    const c = await connect()
    const ready = await c.identify(user.token, {
      intents: 513,
      shard: [0, 1],
      compress: false,
      capabilities: 16381,
      large_threshold: 250,
    })
    expect(ready.user.id).toBe(user.id)
    // READY gives the shard back, as Discord does (discord.py's AutoShardedClient reads it); without one, none.
    expect(ready.shard).toEqual([0, 1])
    expect((await identified(user.token)).ready.shard).toBeUndefined()
  })

  test('an Identify with a shard that is not [shard_id < num_shards] closes 4010', async () => {
    const app = await makeApp()
    for (const shard of [[1, 1], [0, 0], [-1, 2], [0.5, 2], [0], [0, 1, 2], '0,1', { 0: 0, 1: 1 }]) {
      const c = await connect()
      c.send(2, { token: `Bot ${app.bot_token}`, properties: {}, intents: 0, shard })
      expect((await c.waitForClose()).code).toBe(4010)
    }
  })

  test('heartbeat is acknowledged', async () => {
    const c = await connect({ heartbeat: false })
    c.send(1, null)
    expect((await c.waitForOp(11)).d).toBeNull()
  })

  test('a heartbeat is acknowledged at once while an earlier message of the socket is being handled', async () => {
    // The socket's messages are handled in order, but a heartbeat only says the socket is alive: queued behind a
    // handler that takes seconds (a call's first join on a busy machine) it made a live client time out (4009).
    const SLOW_OP = 250
    let release!: () => void
    const handled: string[] = []
    onOpcode(SLOW_OP, async () => {
      await new Promise<void>((resolve) => (release = resolve))
      handled.push('slow')
    })
    try {
      const user = await makeUser()
      const c = await connect({ heartbeat: false })
      await c.identify(user.token)
      const ack = (since: number) => c.waitFor((f) => f.op === 11, 1000, { since })
      c.send(SLOW_OP, null)
      let since = c.frames.length
      c.send(1, null)
      expect((await ack(since)).d).toBeNull()
      expect(handled).toEqual([])
      release()
      since = c.frames.length
      c.send(1, null)
      await ack(since)
      expect(handled).toEqual(['slow'])
    } finally {
      wiring().opHandlers.delete(SLOW_OP)
      release?.()
    }
  })
})

describe('close codes', () => {
  test('4001 unknown opcode', async () => {
    const user = await makeUser()
    const { c } = await identified(user.token)
    c.send(99, {})
    expect((await c.waitForClose()).code).toBe(4001)
  })

  test('4002 undecodable payload, non-object, and over 15 KiB', async () => {
    for (const payload of ['{not json', '42', JSON.stringify({ op: 1, d: 'x'.repeat(16 * 1024) })]) {
      const c = await connect()
      c.sendRaw(payload)
      expect((await c.waitForClose()).code).toBe(4002)
    }
  })

  test('4003 anything but Identify/Heartbeat before Identify', async () => {
    const c = await connect()
    c.send(3, { status: 'online' })
    expect((await c.waitForClose()).code).toBe(4003)
  })

  test('4004 bad token', async () => {
    for (const token of ['nope', 'Bot nope', 'Bearer nope']) {
      const c = await connect()
      c.send(2, { token, properties: {} })
      expect((await c.waitForClose()).code).toBe(4004)
    }
  })

  test('4005 second Identify', async () => {
    const user = await makeUser()
    const { c } = await identified(user.token)
    c.send(2, { token: user.token, properties: {} })
    expect((await c.waitForClose()).code).toBe(4005)
  })

  test('4009 when no heartbeat arrives within the interval plus grace', async () => {
    const c = await connect({ heartbeat: false })
    expect((await c.waitForClose(config().gatewayHeartbeatMs * 1.5 + 2500)).code).toBe(4009)
  })

  test('4012 for an unsupported API version', async () => {
    const c = await connect({ query: '?v=8&encoding=json' })
    expect((await c.waitForClose()).code).toBe(4012)
  })
})

describe('dispatch and subscriptions', () => {
  test('publish reaches subscribed sockets only, with increasing s', async () => {
    const alice = await makeUser()
    const bob = await makeUser()
    const a = (await identified(alice.token)).c
    const b = (await identified(bob.token)).c
    events.publish(topics.account(alice.id), 'TEST_EVENT', { n: 1 })
    events.publish(topics.account(alice.id), 'TEST_EVENT', { n: 2 })
    const first = await a.waitFor('TEST_EVENT')
    await a.waitFor((f) => f.t === 'TEST_EVENT' && f.d.n === 2)
    const [x, y] = a.dispatches('TEST_EVENT')
    expect(first.d).toEqual({ n: 1 })
    expect(y.s!).toBeGreaterThan(x.s!)
    await b.expectNo('TEST_EVENT')
  })

  test('subscribeUser takes effect on a live connection without reconnecting', async () => {
    const user = await makeUser()
    const { c } = await identified(user.token)
    const topic = `test:${user.id}`
    events.publish(topic, 'ROOM_EVENT', { before: true })
    await c.expectNo('ROOM_EVENT', 100)
    events.subscribeUser(user.id, topic, audiences.account)
    events.publish(topic, 'ROOM_EVENT', { after: true })
    expect((await c.waitFor('ROOM_EVENT')).d).toEqual({ after: true })
    events.unsubscribeUser(user.id, topic)
    events.publish(topic, 'ROOM_EVENT', { gone: true })
    await c.expectNo('ROOM_EVENT', 150)
  })

  test('subscribeUsers / unsubscribeUsers: every named user’s sessions that see the audience follow every topic, then none', async () => {
    const [one, two, other] = [await makeUser(), await makeUser(), await makeUser()]
    const app = await makeApp()
    const oauth = `Bearer ${await bearerToken(app.id, two.id, 'identify guilds gateway.connect')}`
    const [a, b, c, d] = [
      (await identified(one.token)).c,
      (await identified(two.token)).c,
      (await identified(other.token)).c,
      (await identified(oauth)).c,
    ]
    const room = [`test:${one.id}:x`, `test:${one.id}:y`]
    events.subscribeUsers([one.id, two.id], room, audiences.guildActivity)
    events.publish(room[0], 'ROOM_EVENT', { in: 'x' })
    events.publish(room[1], 'ROOM_EVENT', { in: 'y' })
    for (const s of [a, b]) await s.waitFor((f) => f.t === 'ROOM_EVENT' && f.d.in === 'y')
    for (const s of [a, b]) expect(s.dispatches('ROOM_EVENT').map((f) => f.d.in)).toEqual(['x', 'y'])
    // Not named, or an OAuth2 session that does not see guild activity: not subscribed.
    await c.expectNo('ROOM_EVENT', 50)
    await d.expectNo('ROOM_EVENT', 50)
    events.unsubscribeUsers([one.id, two.id], room)
    for (const topic of room) events.publish(topic, 'ROOM_EVENT', { gone: true })
    events.publish(topics.account(one.id), 'SEEN', {})
    events.publish(topics.account(two.id), 'SEEN', {})
    for (const s of [a, b]) {
      await s.waitFor('SEEN')
      expect(s.dispatches('ROOM_EVENT')).toHaveLength(2)
    }
  })

  test('a session following many topics (a member of many channels) gets each once, loses the ones it leaves, and resumes on them', async () => {
    const user = await makeUser()
    const { c, ready } = await identified(user.token)
    const many = Array.from({ length: 40 }, (_, i) => `test:${user.id}:${i}`)
    for (const topic of [...many, ...many.slice(0, 5)]) events.subscribeUser(user.id, topic, audiences.account)
    many.forEach((topic, i) => events.publish(topic, 'ROOM_EVENT', { i }))
    await c.waitFor((f) => f.t === 'ROOM_EVENT' && f.d.i === 39)
    expect(c.dispatches('ROOM_EVENT').map((f) => f.d.i)).toEqual(many.map((_, i) => i))
    for (const topic of many.slice(20)) events.unsubscribeUser(user.id, topic)
    events.publish(topics.account(user.id), 'SEEN', {})
    await c.waitFor('SEEN')
    const seq = c.lastSeq!
    c.close(4000)
    await c.waitForClose()
    many.forEach((topic, i) => events.publish(topic, 'MISSED', { i }))
    const r = await connect()
    r.send(6, { token: user.token, session_id: ready.session_id, seq })
    await r.waitFor('RESUMED')
    expect(r.dispatches('MISSED').map((f) => f.d.i)).toEqual(many.slice(0, 20).map((_, i) => i))
  })

  test('bots receive their application topic, users do not', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const bot = (await identified(app.bot_token)).c
    const u = (await identified(user.token)).c
    events.publish(topics.app(app.id), 'APP_EVENT', { ok: 1 })
    expect((await bot.waitFor('APP_EVENT')).d).toEqual({ ok: 1 })
    await u.expectNo('APP_EVENT')
  })

  test('closeAuthSession closes that session with the code and it cannot resume', async () => {
    const user = await makeUser()
    const { c, ready } = await identified(user.token)
    const other = (await identified(user.token)).c // same token: same auth session
    const [row] = await (await import('../../src/accounts/sessions')).listSessions(user.id)
    events.closeAuthSession(row.id, 4004)
    expect((await c.waitForClose()).code).toBe(4004)
    expect((await other.waitForClose()).code).toBe(4004)
    const again = await connect()
    again.send(6, { token: user.token, session_id: ready.session_id, seq: 1 })
    expect((await again.waitForOp(9)).d).toBe(false)
  })
})

describe('resume', () => {
  test('replays missed dispatches in order, then RESUMED', async () => {
    const user = await makeUser()
    const { c, ready } = await identified(user.token)
    events.publish(topics.account(user.id), 'SEEN', { i: 0 })
    await c.waitFor('SEEN')
    const seq = c.lastSeq!
    c.close(4000) // a non-1000 close keeps the session resumable
    await c.waitForClose()
    for (let i = 1; i <= 5; i++) events.publish(topics.account(user.id), 'MISSED', { i })
    const r = await connect()
    r.send(6, { token: user.token, session_id: ready.session_id, seq })
    await r.waitFor('RESUMED')
    const missed = r.dispatches('MISSED')
    expect(missed.map((f) => f.d.i)).toEqual([1, 2, 3, 4, 5])
    expect(missed.every((f, i) => i === 0 || f.s! > missed[i - 1].s!)).toBe(true)
    expect(r.frames.findIndex((f) => f.t === 'RESUMED')).toBeGreaterThan(r.frames.findIndex((f) => f.t === 'MISSED'))
    expect(r.frames.some((f) => f.t === 'SEEN')).toBe(false)
    // and the session keeps receiving live events
    events.publish(topics.account(user.id), 'LIVE', {})
    await r.waitFor('LIVE')
  })

  test('a 1000 close ends the session: resume gets op 9 false', async () => {
    const user = await makeUser()
    const { c, ready } = await identified(user.token)
    c.close(1000)
    await c.waitForClose()
    await Bun.sleep(50)
    const r = await connect()
    r.send(6, { token: user.token, session_id: ready.session_id, seq: 0 })
    expect((await r.waitForOp(9)).d).toBe(false)
  })

  test('unknown session, other token, or an expired window get op 9 false', async () => {
    const user = await makeUser()
    const stranger = await makeUser()
    const { c, ready } = await identified(user.token)
    c.close(4000)
    await c.waitForClose()
    const unknown = await connect()
    unknown.send(6, { token: user.token, session_id: 'f'.repeat(32), seq: 0 })
    expect((await unknown.waitForOp(9)).d).toBe(false)
    const wrong = await connect()
    wrong.send(6, { token: stranger.token, session_id: ready.session_id, seq: 0 })
    expect((await wrong.waitForOp(9)).d).toBe(false)
    clock.advance(10 * 60_000)
    const late = await connect()
    late.send(6, { token: user.token, session_id: ready.session_id, seq: 0 })
    expect((await late.waitForOp(9)).d).toBe(false)
  })
})
