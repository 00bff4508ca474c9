// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The outbox's partitions (src/cluster/outbox.ts, store.ts relayOutbox) with two real nodes: lobbies whose topics fall
// in different partitions are relayed side by side, each in its own order, while one hot lobby takes most posts; and a
// write's answer and its event do not wait for the relay of another partition (held here by a row lock in another
// connection, as a relay stuck on a slow Redis append or on a dead node's rows would hold it); and under that load a
// node killed right after its COMMIT and Redis killed and restarted lose nothing: every acknowledged write (and the
// dead node's committed one) reaches every socket once, each writer's in its order; an entry whose keys span two
// partitions is appended once, by a relay that holds both, after the older rows of each.
import { describe, expect, test } from 'bun:test'
import { partitionOf, RELAY_WAIT_MS } from '../../src/cluster/outbox'
import { openRedis } from '../../src/cluster/redis'
import type { GatewayClient } from '../gateway-client'
import type { Served } from '../ops/process-helpers'
import { frameType, present, useNodes } from './harness'

const cluster = await useNodes(2)

type Lobby = Awaited<ReturnType<typeof cluster.lobbyWithSockets>>
const partOf = (lobby: { id: string }) => partitionOf(`lobby:${lobby.id}`)
const contents = (s: GatewayClient) => s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content as string)
/** A row any node relays as an entry that changes nothing (an invalidation of a cache no version has). */
const FILLER = JSON.stringify({ kind: 'invalidate', cache: 'no-such-cache', keys: [] })

/** `n` lobbies with a member's socket on each node, no two in one partition. */
async function lobbiesApart(n: number): Promise<Lobby[]> {
  const lobbies: Lobby[] = []
  while (lobbies.length < n) {
    const lobby = await cluster.lobbyWithSockets(cluster.nodes)
    if (!lobbies.some((other) => partOf(other) === partOf(lobby))) lobbies.push(lobby)
  }
  return lobbies
}

describe.skipIf(!present)('the outbox relayed by partition', () => {
  test('two partitions and one hot lobby hammered through both nodes at once: per lobby, each message once, one order, each writer’s in its order', async () => {
    const [a, b] = cluster.nodes
    const [x, y, hot] = await lobbiesApart(3)
    const redis = openRedis(cluster.redis.url, 'test')
    // Writers post one after another; all of them at once, through both nodes, the hot lobby's four.
    const writers = [
      ...[a, b, a, b].map((node) => ({ lobby: hot, node, n: 20 })),
      ...[x, y].flatMap((lobby) => [a, b].map((node) => ({ lobby, node, n: 12 }))),
    ]
    const sent = await Promise.all(
      writers.map(async ({ lobby, node, n }, w) => {
        const mine: string[] = []
        for (let i = 0; i < n; i++) {
          const content = `w${w}-${i}`
          expect((await lobby.post(node, content)).status).toBe(201)
          mine.push(content)
        }
        return mine
      }),
    )
    for (const lobby of [hot, x, y]) {
      const ofLobby = writers.flatMap((w, i) => (w.lobby === lobby ? [i] : []))
      const expected = ofLobby.flatMap((i) => sent[i])
      for (const s of lobby.sockets) for (const c of expected) await s.waitFor((f) => f.d?.content === c, 10_000)
      await Bun.sleep(200)
      const seen = lobby.sockets.map(contents)
      expect([...seen[0]].sort()).toEqual([...expected].sort()) // each once
      expect(seen[1]).toEqual(seen[0]) // one order on both nodes
      for (const i of ofLobby) expect(seen[0].filter((c) => c.startsWith(`w${i}-`))).toEqual(sent[i])
      for (const s of lobby.sockets) {
        const seqs = s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.s as number)
        expect(seqs).toEqual([...seqs].sort((p, q) => p - q))
      }
    }
    const [{ n }] = await cluster.database.sql`SELECT count(*)::int AS n FROM gateway_outbox`
    expect(n).toBe(0)
    // No dedupe key of a message is left (their relays committed and forgot them); what is left was appended outside
    // the outbox (cache invalidations, the members' presence on the lobby's topic) and lapses within a minute.
    for (const key of await redis.keys('gw:ev:*')) {
      const seq = await redis.get(key)
      const [[, fields]] = await redis.xrange('gw:log', `${seq}-0`, `${seq}-0`)
      expect(frameType(fields)).not.toBe('LOBBY_MESSAGE_CREATE')
      expect(await redis.ttl(key)).toBeLessThanOrEqual(60)
    }
    redis.disconnect()
  }, 90_000)

  test('a relay of one partition held: a post to a lobby of another answers promptly and is delivered; the held one follows in order once it goes', async () => {
    const [a, b] = cluster.nodes
    const [x, y] = await lobbiesApart(2)
    expect((await x.post(a, 'before')).status).toBe(201)
    for (const s of x.sockets) await s.waitFor((f) => f.d?.content === 'before', 5000)
    // X's partition: a row of it locked in another connection; its relays wait for it.
    const now = Date.now()
    const part = partOf(x)
    await cluster.database.sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
      VALUES (${`hold-${now}`}, ${FILLER}, ${now}, ${part}, ${String(part)})`
    const held = Promise.withResolvers<void>()
    const locked = Promise.withResolvers<void>()
    const holding = cluster.database.sql.begin(async (tx) => {
      await tx`SELECT id FROM gateway_outbox WHERE event_id = ${`hold-${now}`} FOR UPDATE`
      locked.resolve()
      await held.promise
    })
    await locked.promise
    try {
      // Its own answer goes after RELAY_WAIT_MS (the write committed; its event waits in the table).
      expect((await x.post(a, 'held')).status).toBe(201)
      // Y's: its relay waits for nobody. The quickest of three (a loaded machine may stall any one request).
      const took: number[] = []
      for (const node of [a, b, a]) {
        const started = performance.now()
        expect((await y.post(node, `apart ${took.length}`)).status).toBe(201)
        took.push(performance.now() - started)
      }
      expect(Math.min(...took)).toBeLessThan(RELAY_WAIT_MS)
      for (const s of y.sockets) await s.waitFor((f) => f.d?.content === 'apart 2', 3000)
      for (const s of y.sockets) expect(contents(s)).toEqual(['apart 0', 'apart 1', 'apart 2'])
      for (const s of x.sockets) expect(contents(s)).toEqual(['before'])
    } finally {
      held.resolve()
      await holding
    }
    expect((await x.post(b, 'after')).status).toBe(201)
    for (const s of x.sockets) await s.waitFor((f) => f.d?.content === 'after', 5000)
    await Bun.sleep(200)
    for (const s of x.sockets) expect(contents(s)).toEqual(['before', 'held', 'after'])
    const [{ n }] = await cluster.database.sql`SELECT count(*)::int AS n FROM gateway_outbox`
    expect(n).toBe(0)
  }, 60_000)

  test('under load, a node killed right after its COMMIT and Redis killed and restarted: every write acknowledged (and the dead node’s committed one) delivered once, in order', async () => {
    const [a, b] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'LOBBY_MESSAGE_CREATE' })
    const [x, y, hot] = await lobbiesApart(3)
    const writers = [
      ...[a, b, a, b].map((node) => ({ lobby: hot, node })),
      ...[x, y].flatMap((lobby) => [a, b].map((node) => ({ lobby, node }))),
    ]
    const N = 24
    let killed = false
    const sent = await Promise.all(
      writers.map(async ({ lobby, node }, w) => {
        const mine: string[] = []
        for (let i = 0; i < N; i++) {
          const content = `w${w}-${i}`
          // The first writer's sixth message goes through the node that dies once it has committed it (no answer).
          const through: Served = w === 0 && i === 5 ? dying : node
          if (through === dying) {
            await expect(lobby.post(dying, content)).rejects.toThrow()
            expect(await dying.proc.exited).not.toBe(0)
          } else expect((await lobby.post(through, content)).status).toBe(201)
          mine.push(content)
          // Redis goes away a third of the way in and comes back a little later; writes go on meanwhile.
          if (w === 1 && i === Math.floor(N / 3)) {
            cluster.redis.kill()
            killed = true
          }
          if (w === 1 && i === Math.floor(N / 2) && killed) await cluster.redis.restart()
        }
        return mine
      }),
    )
    for (const lobby of [hot, x, y]) {
      const ofLobby = writers.flatMap((w, i) => (w.lobby === lobby ? [i] : []))
      const expected = ofLobby.flatMap((i) => sent[i])
      for (const s of lobby.sockets) for (const c of expected) await s.waitFor((f) => f.d?.content === c, 20_000)
      await Bun.sleep(300)
      const seen = lobby.sockets.map(contents)
      expect([...seen[0]].sort()).toEqual([...expected].sort())
      expect(seen[1]).toEqual(seen[0])
      for (const i of ofLobby) expect(seen[0].filter((c) => c.startsWith(`w${i}-`))).toEqual(sent[i])
    }
    const [{ n }] = await cluster.database.sql`SELECT count(*)::int AS n FROM gateway_outbox`
    expect(n).toBe(0)
  }, 120_000)

  test('an entry whose keys span two partitions: a relay of one widens to both, appends it once, after the older row of the other', async () => {
    const [a, b] = cluster.nodes
    const [x, y] = await lobbiesApart(2)
    const [px, py] = [partOf(x), partOf(y)]
    const now = Date.now()
    const dispatch = (topics: string[], content: string) =>
      JSON.stringify({ kind: 'dispatch', topics, type: 'LOBBY_MESSAGE_CREATE', data: JSON.stringify({ content }) })
    // As a node that died after its COMMIT leaves them: a row of Y's partition, then an entry to both lobbies (a row in
    // each partition, one event id).
    await cluster.database.sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
      VALUES (${`older-${now}`}, ${dispatch([`lobby:${y.id}`], 'older in y')}, ${now}, ${py}, ${String(py)})`
    const both = dispatch([`lobby:${x.id}`, `lobby:${y.id}`], 'to both')
    const parts = [px, py].sort((p, q) => p - q).join(',')
    await cluster.database.sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
      VALUES (${`both-${now}`}, ${both}, ${now}, ${px}, ${parts}), (${`both-${now}`}, ${both}, ${now}, ${py}, ${parts})`
    // A write to X relays X's partition: the entry spans Y's as well, so that relay takes both, Y's older row first.
    expect((await x.post(a, 'x after')).status).toBe(201)
    for (const s of x.sockets) await s.waitFor((f) => f.d?.content === 'x after', 5000)
    for (const s of y.sockets) await s.waitFor((f) => f.d?.content === 'to both', 5000)
    expect((await y.post(b, 'y after')).status).toBe(201)
    for (const s of y.sockets) await s.waitFor((f) => f.d?.content === 'y after', 5000)
    await Bun.sleep(200)
    for (const s of x.sockets) expect(contents(s)).toEqual(['to both', 'x after'])
    for (const s of y.sockets) expect(contents(s)).toEqual(['older in y', 'to both', 'y after'])
    const [{ n }] = await cluster.database.sql`SELECT count(*)::int AS n FROM gateway_outbox`
    expect(n).toBe(0)
  }, 60_000)
})
