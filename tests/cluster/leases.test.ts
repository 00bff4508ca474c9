// Leases and snowflake node ids in Redis (src/cluster/leases.ts) on a real redis-server: one holder at a time, only
// the owner renews or releases, an expired lease goes to the next taker and its old holder can no longer renew; node
// ids are the lowest free ones, never shared while held, taken over once their holder stops renewing.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { Lease, leaseNodeId, type NodeIdLease, nodeIdKey } from '../../src/cluster/leases'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { shareTurns } from '../../src/cluster/turns'
import { myTurn, useTurns } from '../../src/core/turns'
import { type RedisServer, startRedis } from './redis'

let server: RedisServer
let nodes: Redis[]
const held: NodeIdLease[] = []

beforeAll(async () => {
  server = await startRedis()
  nodes = [0, 1, 2].map((n) => openRedis(server.url, `node-${n}`))
})
afterAll(async () => {
  await Promise.all(held.map((lease) => lease.release()))
  for (const node of nodes) node.disconnect()
  server?.stop()
})
beforeEach(async () => {
  await Promise.all(held.splice(0).map((lease) => lease.release()))
  await nodes[0].flushall()
})

async function take(node: number, owner: string, options: Parameters<typeof leaseNodeId>[2] = {}) {
  const lease = await leaseNodeId(nodes[node], owner, options)
  held.push(lease)
  return lease
}

describe('a lease', () => {
  test('one holder at a time; only the owner renews or releases it', async () => {
    const a = new Lease(nodes[0], 'voice:room:1', 'node-a', { ttlMs: 10_000 })
    const b = new Lease(nodes[1], 'voice:room:1', 'node-b', { ttlMs: 10_000 })
    const [gotA, gotB] = await Promise.all([a.acquire(), b.acquire()])
    expect([gotA, gotB].filter(Boolean)).toHaveLength(1)
    const [holder, other] = gotA ? [a, b] : [b, a]
    expect(holder.held()).toBe(true)
    expect(other.held()).toBe(false)
    expect(await other.renew()).toBe(false)
    await other.release()
    expect(await nodes[2].get('voice:room:1')).toBe(holder.owner)
    expect(await holder.renew()).toBe(true)
    await holder.release()
    expect(holder.held()).toBe(false)
    expect(await other.acquire()).toBe(true)
  })

  test('an expired lease goes to the next taker, and its old holder can neither renew nor release it', async () => {
    const a = new Lease(nodes[0], 'housekeeping', 'node-a', { ttlMs: 200, marginMs: 50 })
    const b = new Lease(nodes[1], 'housekeeping', 'node-b', { ttlMs: 10_000 })
    expect(await a.acquire()).toBe(true)
    expect(await b.acquire()).toBe(false)
    await Bun.sleep(160)
    expect(a.held()).toBe(false) // the holder stops counting on it before Redis lets it go
    await Bun.sleep(60)
    expect(await b.acquire()).toBe(true)
    expect(await a.renew()).toBe(false)
    await a.release()
    expect(await nodes[2].get('housekeeping')).toBe('node-b')
    expect(b.held()).toBe(true)
  })
})

describe('node ids', () => {
  test('three nodes at once take three different ids, the lowest free ones', async () => {
    const leases = await Promise.all([0, 1, 2].map((n) => take(n, `node-${n}`)))
    expect(leases.map((l) => l.id).sort()).toEqual([0, 1, 2])
    for (const [n, lease] of leases.entries()) {
      expect(lease.held()).toBe(true)
      expect(await nodes[0].get(nodeIdKey(lease.id))).toBe(`node-${n}`)
    }
    // A released id is the lowest free one again.
    const middle = leases.find((l) => l.id === 1)!
    await middle.release()
    expect(middle.held()).toBe(false)
    expect((await take(0, 'node-3')).id).toBe(1)
    expect((await take(1, 'node-4')).id).toBe(3)
  })

  test('renewed, an id stays its holder’s past the lease time', async () => {
    const first = await take(0, 'node-a', { ttlMs: 1000, renewMs: 100 })
    await Bun.sleep(1300)
    expect(first.held()).toBe(true)
    expect((await take(1, 'node-b')).id).toBe(first.id + 1)
  })

  test('a holder that stops renewing loses its id: another node takes it over, and the late renew fails', async () => {
    let lost = 0
    // Its first renew comes after the lease has run out (a stalled process, a long pause).
    const stalled = await take(0, 'node-a', { ttlMs: 200, renewMs: 600, onLost: () => lost++ })
    expect(stalled.id).toBe(0)
    await Bun.sleep(250)
    expect(stalled.held()).toBe(false)
    const next = await take(1, 'node-b', { ttlMs: 5_000 })
    expect(next.id).toBe(0)
    for (const deadline = Date.now() + 5000; lost === 0 && Date.now() < deadline; ) await Bun.sleep(10)
    expect(lost).toBe(1)
    expect(await nodes[2].get(nodeIdKey(0))).toBe('node-b')
    expect(next.held()).toBe(true)
    // Still one id per holder: a third node gets the next one.
    expect((await take(2, 'node-c')).id).toBe(1)
  })
})

describe('turns of periodic work (cluster/turns.ts)', () => {
  test('one node has the turn while it keeps asking; another gets it once the lease of three periods has run out', async () => {
    const askAs = async (node: number, owner: string) => {
      shareTurns(nodes[node], owner)
      const mine = await myTurn('housekeeping', 100)
      useTurns(undefined) // not its stop(), which would release the lease: the node is gone without a word
      return { mine }
    }
    expect((await askAs(0, 'node A')).mine).toBe(true)
    expect((await askAs(1, 'node B')).mine).toBe(false)
    expect((await askAs(0, 'node A')).mine).toBe(true) // renewed
    await Bun.sleep(350)
    expect((await askAs(1, 'node B')).mine).toBe(true)
    expect((await askAs(0, 'node A')).mine).toBe(false)
    // One server (no cluster): always its turn.
    expect(await myTurn('housekeeping', 100)).toBe(true)
  })
})
