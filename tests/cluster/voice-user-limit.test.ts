// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The 5-calls-per-user voice limit over a cluster (src/voice/calls.ts claimCall, src/cluster/routing.ts CLAIM): two
// real nodes, a user's calls placed on both (three on A, two on B): a sixth is refused whichever node places it, and
// leaving one makes room on the other node.
import { describe, expect, test } from 'bun:test'
import { openRedis } from '../../src/cluster/redis'
import { GatewayClient } from '../gateway-client'
import { until } from '../voice/peer'
import { call, newApp, newUser, present, useNodes } from './harness'

const world = await useNodes(2)

const states = (ids: string[]) => ids.map((id) => ({ lobby_id: id, self_mute: false, self_deaf: false }))

describe.skipIf(!present)('a user’s calls counted over two nodes', () => {
  test('five calls on A and B: a sixth is refused on either; one left makes room', async () => {
    const [a, b] = world.nodes
    const app = await newApp(world.env)
    const user = await newUser(world.env)
    const lobbies: string[] = []
    for (let i = 0; i < 7; i++) {
      const made = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
      expect(made.status).toBe(201)
      lobbies.push(made.body.id)
    }
    const onA = (await GatewayClient.identified(user.token, {}, a.port)).client
    const onB = (await GatewayClient.identified(user.token, {}, b.port)).client
    const closeOf = (s: GatewayClient, lobbyId: string) =>
      s.waitFor((f) => f.t === 'LOBBY_VOICE_SERVER_CLOSE' && f.d.lobby_id === lobbyId, 10_000)
    try {
      // Each session's op 17 places its calls on its own node: three on A, two on B.
      onA.send(17, states(lobbies.slice(0, 3)))
      await until('three offers on A', () => onA.dispatches('LOBBY_VOICE_SERVER_OFFER').length === 3, 10_000)
      onB.send(17, states(lobbies.slice(3, 5)))
      await until('two offers on B', () => onB.dispatches('LOBBY_VOICE_SERVER_OFFER').length === 2, 10_000)
      const redis = openRedis(world.redis.url, 'test')
      try {
        const held = await redis.hgetall(`voice:user-calls:${user.id}`)
        expect(Object.keys(held).sort()).toEqual(lobbies.slice(0, 5).sort())
        expect(new Set(Object.values(held)).size).toBe(2)
      } finally {
        redis.disconnect()
      }

      // A sixth through A (placed on A) and a seventh through B (placed on B): both refused.
      onA.send(17, states([...lobbies.slice(0, 3), lobbies[5]]))
      expect((await closeOf(onA, lobbies[5])).d.reason).toBe('too_many_calls')
      onB.send(17, states([...lobbies.slice(3, 5), lobbies[6]]))
      expect((await closeOf(onB, lobbies[6])).d.reason).toBe('too_many_calls')
      expect(onA.dispatches('LOBBY_VOICE_SERVER_OFFER')).toHaveLength(3)
      expect(onB.dispatches('LOBBY_VOICE_SERVER_OFFER')).toHaveLength(2)

      // A leaves one of its calls: B's seventh now joins.
      onA.send(17, states(lobbies.slice(1, 3)))
      expect((await closeOf(onA, lobbies[0])).d.reason).toBe('left')
      onB.send(17, states([...lobbies.slice(3, 5), lobbies[6]]))
      const offer = await onB.waitFor((f) => f.t === 'LOBBY_VOICE_SERVER_OFFER' && f.d.lobby_id === lobbies[6], 10_000)
      expect(offer.d.lobby_id).toBe(lobbies[6])
    } finally {
      onA.close()
      onB.close()
    }
  }, 60_000)
})
