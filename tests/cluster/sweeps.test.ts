// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Periodic clean-up on three real nodes (core/turns.ts, cluster/turns.ts): the lobby idle sweep runs on one node at a
// time, under a lease that the node keeps while it lives; an idle lobby is deleted once (one LOBBY_DELETE on a socket
// of each node), and when the node that sweeps dies another takes the sweep over.
import { describe, expect, test } from 'bun:test'
import { openRedis } from '../../src/cluster/redis'
import type { GatewayClient } from '../gateway-client'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(3)

/**
 * Make the lobby idle past its deadline (as an hour of silence would) until every socket got its LOBBY_DELETE: its
 * member's sessions coming online stop the countdown (async, once per node), which may come after a first try.
 */
async function idleUntilDeleted({ id, sockets }: { id: string; sockets: GatewayClient[] }, withinMs: number) {
  const deleted = (s: GatewayClient) => s.dispatches('LOBBY_DELETE').some((f) => f.d.id === id)
  for (const until = Date.now() + withinMs; !sockets.every(deleted); await Bun.sleep(250)) {
    if (Date.now() > until) throw new Error(`no LOBBY_DELETE within ${withinMs} ms`)
    await cluster.database.sql`UPDATE lobbies SET idle_deadline = 1 WHERE id = ${id}`
  }
}

describe.skipIf(!present)('periodic clean-up on three nodes', () => {
  test('an idle lobby is deleted once: one LOBBY_DELETE on a socket of each node', async () => {
    const lobby = await cluster.lobbyWithSockets(cluster.nodes)
    const { id, sockets } = lobby
    await idleUntilDeleted(lobby, 10_000)
    await Bun.sleep(1500) // a second sweep on another node would have sent its own by now
    for (const s of sockets) expect(s.dispatches('LOBBY_DELETE').filter((f) => f.d.id === id)).toHaveLength(1)
    expect(await cluster.database.sql`SELECT id FROM lobbies WHERE id = ${id}`).toHaveLength(0)
  }, 60_000)

  test('the node holding the sweep dies: another node takes it over and deletes the next idle lobby', async () => {
    const redis = openRedis(cluster.redis.url, 'test')
    try {
      let holder: string | null = null
      for (let i = 0; i < 100 && holder === null; i++) {
        holder = await redis.get('cluster:turn:lobby-idle-sweep')
        if (holder === null) await Bun.sleep(50)
      }
      expect(holder).not.toBeNull()
      // The holder is the node whose node-id lease has the same owner.
      const ids = await redis.keys('cluster:node-id:*')
      const owners = await Promise.all(ids.map((k) => redis.get(k)))
      expect(owners).toContain(holder)
      // Which of the three it is: each node's snowflakes carry its node id.
      const app = await cluster.newApp()
      const made = await Promise.all(cluster.nodes.map((n) => call(n, 'POST', '/lobbies', app.bot, {})))
      const nodeIdOf = (snowflake: string) => Number((BigInt(snowflake) >> 12n) & 0x3ffn)
      const holderId = Number(ids[owners.indexOf(holder)].split(':').pop())
      const index = made.findIndex((r) => nodeIdOf(r.body.id) === holderId)
      expect(index).toBeGreaterThanOrEqual(0)
      const [dead] = cluster.nodes.splice(index, 1)
      dead.proc.kill('SIGKILL')
      await dead.proc.exited
      await idleUntilDeleted(await cluster.lobbyWithSockets(cluster.nodes), 15_000)
      expect(await redis.get('cluster:turn:lobby-idle-sweep')).not.toBe(holder)
    } finally {
      redis.disconnect()
    }
  }, 60_000)
})
