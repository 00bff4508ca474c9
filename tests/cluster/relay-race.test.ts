// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Relays racing (src/cluster/outbox.ts, store.ts relayOutbox): messages posted through two nodes at once commit side
// by side, and each node's relay, right after its COMMIT, takes the oldest rows whoever wrote them; the rows a relay
// takes (deleted under their locks) are gone for the relay that waited on them. So each message reaches every socket
// once, all sockets see one order with `s` rising, and no row is left behind; nor the messages' dedupe keys in Redis (a
// relay that committed forgets its event ids: no row of theirs is left to relay again).
import { describe, expect, test } from 'bun:test'
import { openRedis } from '../../src/cluster/redis'
import { frameType, present, useNodes } from './harness'

const cluster = await useNodes(2)

describe.skipIf(!present)('outbox relays of two nodes at once', () => {
  test('60 messages posted through both nodes at once: each socket gets each once, in one order, s rising; no row or key left', async () => {
    const [a, b] = cluster.nodes
    const { sockets, post } = await cluster.lobbyWithSockets([a, b])
    const redis = openRedis(cluster.redis.url, 'test')
    const contents = Array.from({ length: 60 }, (_, i) => `m${i}`)
    const answers = await Promise.all(contents.map((c, i) => post(i % 2 ? b : a, c)))
    expect(answers.map((r) => r.status)).toEqual(contents.map(() => 201))
    for (const s of sockets) for (const c of contents) await s.waitFor((f) => f.d?.content === c, 10_000)
    await Bun.sleep(300)
    const seen = sockets.map((s) => s.dispatches('LOBBY_MESSAGE_CREATE'))
    expect([...seen[0].map((f) => f.d.content)].sort()).toEqual([...contents].sort())
    expect(seen[1].map((f) => f.d.content)).toEqual(seen[0].map((f) => f.d.content))
    const seqs = seen[0].map((f) => f.s as number)
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
    expect(new Set(seqs).size).toBe(60)
    const [{ n }] = await cluster.database.sql`SELECT count(*)::int AS n FROM gateway_outbox`
    expect(n).toBe(0)
    // Each key left names the entry it deduplicates: none of the messages (their relays committed); what is left was
    // appended outside the outbox (cache invalidations, the members' presence on the lobby's topic) and lapses within
    // a minute.
    for (const key of await redis.keys('gw:ev:*')) {
      const seq = await redis.get(key)
      const [[, fields]] = await redis.xrange('gw:log', `${seq}-0`, `${seq}-0`)
      expect(frameType(fields)).not.toBe('LOBBY_MESSAGE_CREATE')
      expect(await redis.ttl(key)).toBeLessThanOrEqual(60)
    }
    redis.disconnect()
  }, 60_000)
})
