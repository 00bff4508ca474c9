// A Resume on any node (gateway/identify.ts resumeTaken, cluster/sessions.ts) on a real redis-server: a session whose
// socket was on another node (its record saved there, its node maybe gone) resumes here with exactly what the log
// delivered after the client's seq — through the topic changes and credential changes the log carries — and follows
// its topics here from then on; the node that held it lets go of it; one taker at a time; a session ended in between,
// dropped, or older than the log gets op 9. "Another node" is a second Redis connection that saves records and appends
// entries as a node does. The test server runs on SQLite, its node's parts started directly (as gateway-log.test.ts).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { GatewayLog, LOG_KEY } from '../../src/cluster/log'
import { startClusterNode, type ClusterNode } from '../../src/cluster/node'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { sessionRegistry } from '../../src/cluster/sessions'
import { resolveAuthorization } from '../../src/core/caller'
import { audiences, type SessionRecord, topics } from '../../src/gateway/bus'
import { drainGatewaySockets } from '../../src/gateway/server'
import { tracked } from '../gateway-client'
import { createSession } from '../../src/accounts/sessions'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { grantTokens, type TestUser } from '../oauth2/helpers'
import { type RedisServer, startRedis } from './redis'

let redis: RedisServer
let node: ClusterNode
let other: Redis
let elsewhere: GatewayLog
let otherNode: ReturnType<typeof sessionRegistry>

beforeAll(async () => {
  redis = await startRedis()
  node = await startClusterNode(redis.url)
  other = openRedis(redis.url, 'other-node')
  elsewhere = new GatewayLog(other)
  otherNode = sessionRegistry(other, elsewhere, 'node-x', 60_000)
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

let n = 0
const lobbyTopic = () => topics.lobby(`77${Date.now()}${++n}`)

/** A message dispatched to a topic by another node. */
const dispatchElsewhere = (topic: string, content: string) =>
  elsewhere.append(crypto.randomUUID(), {
    kind: 'dispatch',
    topics: [topic],
    type: 'LOBBY_MESSAGE_CREATE',
    data: JSON.stringify({ content }),
  })

/** Until this node has applied everything appended so far. */
async function caughtUp(): Promise<number> {
  const last = await elsewhere.seq()
  while (node.gateway.consumer.applied() < last) await Bun.sleep(5)
  return last
}

/**
 * A user whose Gateway session lived on another node: its record as that node saved it, following `extra`; identified
 * with `tokenOf(user)` (the user's own token unless given).
 */
async function sessionElsewhere(extra: string[] = [], tokenOf?: (user: TestUser) => Promise<string>) {
  const user = await makeUser()
  const caller = (await resolveAuthorization(tokenOf ? await tokenOf(user) : user.token, { bare: true }))!
  const id = crypto.randomUUID().replaceAll('-', '')
  const readySeq = await caughtUp()
  const record: SessionRecord = {
    id,
    caller,
    topics: [
      id,
      ...(caller.kind === 'user' ? [topics.account(user.id), topics.session(caller.sessionId)] : []),
      ...extra,
    ],
    readySeq,
  }
  otherNode.save(record)
  await other.ping() // the save has reached Redis
  return { user, record }
}

async function resumeHere(token: string, sessionId: string, seq: number) {
  const socket = await sockets.connect()
  socket.send(6, { token, session_id: sessionId, seq })
  await socket.waitFor((f) => f.t === 'RESUMED' || f.op === 9)
  return socket
}

describe('a session of another node resumes here', () => {
  test('it gets exactly what it missed, as the topic changes in the log say, then follows its topics here', async () => {
    const [a, b, z] = [lobbyTopic(), lobbyTopic(), lobbyTopic()]
    const { user, record } = await sessionElsewhere([a])
    await dispatchElsewhere(a, 'one')
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-user',
      userId: user.id,
      topic: b,
      audience: audiences.account,
    })
    await dispatchElsewhere(b, 'two')
    await dispatchElsewhere(z, 'not followed')
    await elsewhere.append(crypto.randomUUID(), { kind: 'unsubscribe-user', userId: user.id, topic: a })
    await dispatchElsewhere(a, 'after leaving')
    const before = await caughtUp()
    const socket = await resumeHere(user.token, record.id, record.readySeq)
    expect(socket.frames.some((f) => f.op === 9)).toBe(false)
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['one', 'two'])
    const resumed = socket.frames.at(-1)!
    expect(resumed.t).toBe('RESUMED')
    expect(resumed.s).toBeGreaterThan(before)
    // The other nodes are told to let go of it; this node keeps its record now.
    const entries = await other.xrange(LOG_KEY, `${before + 1}-0`, '+')
    const take = entries.find(([, f]) => f[f.indexOf('k') + 1] === 'take-session')!
    const taken = JSON.parse(take[1][take[1].indexOf('d') + 1])
    expect(taken.sessionId).toBe(record.id)
    expect(taken.node).not.toBe('node-x')
    // From now on what is dispatched to its topics reaches it here, and not what it left.
    await dispatchElsewhere(b, 'live')
    await dispatchElsewhere(a, 'left')
    expect((await socket.waitFor((f) => f.d?.content === 'live')).s).toBeGreaterThan(resumed.s!)
    await socket.expectNo('NOTHING', 100)
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['one', 'two', 'live'])
  })

  test('calls that name many users and topics change its topics when they name its user', async () => {
    const [a, b, c, z] = [lobbyTopic(), lobbyTopic(), lobbyTopic(), lobbyTopic()]
    const { user, record } = await sessionElsewhere([a])
    const others = ['1', '2', '3']
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-users',
      userIds: [...others, user.id],
      topics: [b, c],
      audience: audiences.guildActivity,
    })
    // A call that does not name its user: no change.
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'subscribe-users',
      userIds: others,
      topics: [z],
      audience: audiences.guildActivity,
    })
    for (const [topic, content] of [
      [a, 'one'],
      [b, 'two'],
      [c, 'three'],
      [z, 'not followed'],
    ])
      await dispatchElsewhere(topic, content)
    await elsewhere.append(crypto.randomUUID(), {
      kind: 'unsubscribe-users',
      userIds: [user.id, ...others],
      topics: [a, b],
    })
    for (const topic of [a, b, c]) await dispatchElsewhere(topic, `after leaving ${topic === c ? 'the others' : topic}`)
    await caughtUp()
    const socket = await resumeHere(user.token, record.id, record.readySeq)
    expect(socket.frames.some((f) => f.op === 9)).toBe(false)
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual([
      'one',
      'two',
      'three',
      'after leaving the others',
    ])
  })

  test('a change of auth session in the log reaches it as AUTH_SESSION_CHANGE with the entry’s s', async () => {
    const { user, record } = await sessionElsewhere()
    const caller = record.caller as Extract<typeof record.caller, { kind: 'user' }>
    // The new auth session's token is what the client holds now (its old one ends with the change).
    const { token: newToken } = await createSession(user.id, { platform: 'test' })
    const next = (await resolveAuthorization(newToken)) as Extract<typeof record.caller, { kind: 'user' }>
    const seq = await elsewhere.append(crypto.randomUUID(), {
      kind: 'change-auth-session',
      oldAuthSessionId: caller.sessionId,
      next,
    })
    await dispatchElsewhere(topics.session(next.sessionId), 'to the new auth session')
    await caughtUp()
    const socket = await resumeHere(newToken, record.id, record.readySeq)
    const change = socket.frames.find((f) => f.t === 'AUTH_SESSION_CHANGE')!
    expect(change).toEqual({
      op: 0,
      d: { auth_session_id_hash: next.sessionIdHash },
      s: seq,
      t: 'AUTH_SESSION_CHANGE',
    })
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['to the new auth session'])
  })

  test('two resumes of it at once: one takes it, the other gets op 9', async () => {
    const { user, record } = await sessionElsewhere()
    const both = await Promise.all([
      resumeHere(user.token, record.id, record.readySeq),
      resumeHere(user.token, record.id, record.readySeq),
    ])
    const outcomes = both.map((s) => (s.frames.some((f) => f.t === 'RESUMED') ? 'resumed' : 'invalid')).sort()
    expect(outcomes).toEqual(['invalid', 'resumed'])
  })

  test('op 9 when it ended in between (a logout), when another user’s token asks, when the log no longer reaches back', async () => {
    const ended = await sessionElsewhere()
    const authSession = (ended.record.caller as { sessionId: string }).sessionId
    await elsewhere.append(crypto.randomUUID(), { kind: 'close-auth-session', authSessionId: authSession, code: 4004 })
    await caughtUp()
    const afterLogout = await resumeHere(ended.user.token, ended.record.id, ended.record.readySeq)
    expect(afterLogout.frames.at(-1)).toMatchObject({ op: 9, d: false })

    const mine = await sessionElsewhere()
    const stranger = await makeUser()
    const wrongUser = await resumeHere(stranger.token, mine.record.id, mine.record.readySeq)
    expect(wrongUser.frames.at(-1)).toMatchObject({ op: 9, d: false })

    const unknown = await resumeHere(stranger.token, 'no-such-session', 0)
    expect(unknown.frames.at(-1)).toMatchObject({ op: 9, d: false })

    // What it missed is no longer in the stream (trimmed, as MAXLEN does to old entries).
    const old = await sessionElsewhere()
    await dispatchElsewhere(topics.account(old.user.id), 'trimmed away')
    await caughtUp()
    await other.xtrim(LOG_KEY, 'MAXLEN', 0)
    const tooOld = await resumeHere(old.user.token, old.record.id, old.record.readySeq)
    expect(tooOld.frames.at(-1)).toMatchObject({ op: 9, d: false })
  })
})

describe('a session of another node is taken only with its own credential', () => {
  const SCOPES = 'identify gateway.connect lobbies.write'
  const bearer =
    (app: Awaited<ReturnType<typeof makeApp>>, scope = SCOPES) =>
    async (user: TestUser) =>
      `Bearer ${(await grantTokens(user, app, scope)).access_token}`

  /** Refused as Discord refuses (op 9 d:false), with nothing replayed; the record still names the node that held it. */
  async function expectRefused(token: string, record: SessionRecord) {
    const socket = await resumeHere(token, record.id, record.readySeq)
    expect(socket.frames.at(-1)).toMatchObject({ op: 9, d: false })
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE')).toEqual([])
    expect(JSON.parse((await other.get(`gw:sess:${record.id}`))!).node).toBe('node-x')
  }

  test("an application's OAuth2 session: another application's token, another grant, the user's token get op 9", async () => {
    const [appA, appB] = [await makeApp(), await makeApp()]
    const lobby = lobbyTopic()
    let mine = ''
    const { user, record } = await sessionElsewhere([lobby], async (u) => (mine = await bearer(appA)(u)))
    await dispatchElsewhere(lobby, 'missed')
    await caughtUp()
    await expectRefused(await bearer(appB)(user), record)
    await expectRefused((await bearer(appB)(user)).slice('Bearer '.length), record)
    await expectRefused(await bearer(appA)(user), record) // a second authorization: another grant
    await expectRefused(await bearer(appA, 'identify gateway.connect')(user), record)
    await expectRefused(user.token, record)
    const socket = await resumeHere(mine, record.id, record.readySeq)
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['missed'])
    expect(socket.frames.at(-1)?.t).toBe('RESUMED')
  })

  test("a user's session: another auth session of the user, or an application's token of the user, gets op 9", async () => {
    const app = await makeApp()
    const lobby = lobbyTopic()
    const { user, record } = await sessionElsewhere([lobby])
    await dispatchElsewhere(lobby, 'missed')
    await caughtUp()
    await expectRefused((await createSession(user.id, { platform: 'test' })).token, record)
    await expectRefused(await bearer(app)(user), record)
    const socket = await resumeHere(user.token, record.id, record.readySeq)
    expect(socket.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content)).toEqual(['missed'])
    expect(socket.frames.at(-1)?.t).toBe('RESUMED')
  })
})

describe('a session of this node', () => {
  test('is saved at Identify; taken by another node, it is let go here (4009) and its record kept', async () => {
    const user = await makeUser()
    const socket = await sockets.identified(user.token)
    const ready = socket.frames.find((f) => f.t === 'READY')!.d
    await Bun.sleep(20)
    const saved = JSON.parse((await other.get(`gw:sess:${ready.session_id}`))!)
    expect(saved).toMatchObject({ id: ready.session_id, caller: { kind: 'user', userId: user.id } })
    expect(saved.topics).toContain(topics.account(user.id))
    expect(await other.pttl(`gw:sess:${ready.session_id}`)).toBeGreaterThan(0)
    await elsewhere.append(crypto.randomUUID(), { kind: 'take-session', sessionId: ready.session_id, node: 'node-x' })
    const closed = await socket.waitForClose()
    expect(closed).toEqual({ code: 4009, reason: 'Session resumed elsewhere' })
    expect(await other.exists(`gw:sess:${ready.session_id}`)).toBe(1)
  })

  test('a node going away (SIGTERM) sends op 7 and closes 4000: the session stays resumable, its record kept', async () => {
    const user = await makeUser()
    const socket = await sockets.identified(user.token)
    const ready = socket.frames.find((f) => f.t === 'READY')!.d
    const drained = drainGatewaySockets()
    expect(await socket.waitForOp(7)).toMatchObject({ op: 7, d: null })
    expect((await socket.waitForClose()).code).toBe(4000)
    await drained
    await Bun.sleep(20)
    expect(await other.exists(`gw:sess:${ready.session_id}`)).toBe(1)
    const again = await resumeHere(user.token, ready.session_id, socket.lastSeq!)
    expect(again.frames.at(-1)?.t).toBe('RESUMED')
  })

  test('going away, it lets a client that closes on op 7 close first, as libraries do (4000 only to the others, later)', async () => {
    const [quick, slow] = await Promise.all(
      [makeUser(), makeUser()].map(async (u) => sockets.identified((await u).token)),
    )
    const drained = drainGatewaySockets()
    await quick.waitForOp(7)
    // Our close arriving first, Discordeno takes it for a second disconnect: a second Resume beside op 7's.
    quick.close(4200) // discord.js's "resuming" close
    expect((await quick.waitForClose()).code).toBe(4200)
    await slow.waitForOp(7)
    expect((await slow.waitForClose()).code).toBe(4000)
    await drained
  })

  test('ended for good (close 1000, logout), its record is dropped: no node can resume it', async () => {
    const user = await makeUser()
    const first = await sockets.identified(user.token)
    const firstId = first.frames.find((f) => f.t === 'READY')!.d.session_id
    const second = await sockets.identified(user.token)
    const secondId = second.frames.find((f) => f.t === 'READY')!.d.session_id
    await Bun.sleep(20)
    expect(await other.exists(`gw:sess:${firstId}`, `gw:sess:${secondId}`)).toBe(2)
    first.close(1000)
    await first.waitForClose()
    expect((await api('POST', '/auth/logout', { token: user.token, body: {} })).status).toBe(204)
    await second.waitForClose()
    for (let i = 0; i < 50 && (await other.exists(`gw:sess:${firstId}`, `gw:sess:${secondId}`)) > 0; i++)
      await Bun.sleep(10)
    expect(await other.exists(`gw:sess:${firstId}`, `gw:sess:${secondId}`)).toBe(0)
  })
})
