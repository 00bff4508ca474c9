// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// A lobby call lives on one node of a cluster (src/voice/placement.ts): two real nodes on PostgreSQL and Redis, a
// member whose socket is on B starts the call (B holds it), a member whose socket is on A joins: A sends the ops to B,
// B answers through the Gateway's log to the socket on A, and the two members hear each other (one call, not two:
// media between them flows only if both are in B's room). Leaving through A ends the member's place in B's call.
// A node that stops (SIGTERM) ends its calls and tells the members whose sockets are elsewhere; they join again on a
// node that stays.
import { afterAll, describe, expect, test } from 'bun:test'
import { openRedis } from '../../src/cluster/redis'
import { GatewayClient } from '../gateway-client'
import { until, VoicePeer } from '../voice/peer'
import { call, newApp, newUser, present, useNodes } from './harness'

const world = await useNodes(2)
const open: { close(): unknown }[] = []
afterAll(async () => {
  for (const c of open) await c.close()
})

async function peerOn(port: number, user: { id: string; token: string }) {
  const { client, ready } = await GatewayClient.identified(user.token, {}, port)
  const peer = new VoicePeer(client, user.id)
  open.push(peer)
  return { peer, sessionId: ready.session_id as string }
}

describe.skipIf(!present)('a lobby call on one node of two', () => {
  test('a member on A joins the call held by B, gets B’s offers through the log, and hears the member on B', async () => {
    const [a, b] = world.nodes
    const app = await newApp(world.env)
    const [onB, onA] = [await newUser(world.env), await newUser(world.env)]
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: onB.id }, { id: onA.id }] })
    expect(lobby.status).toBe(201)
    const lobbyId = lobby.body.id as string
    const first = await peerOn(b.port, onB)
    first.peer.voiceStates(lobbyId)
    await first.peer.gateway.waitFor('LOBBY_VOICE_SERVER_OFFER', 10_000)
    const redis = openRedis(world.redis.url, 'test')
    try {
      const holder = await redis.get(`voice:room:${lobbyId}`)
      expect(holder).not.toBeNull()

      const second = await peerOn(a.port, onA)
      second.peer.voiceStates(lobbyId)
      const offer = await second.peer.gateway.waitFor('LOBBY_VOICE_SERVER_OFFER', 10_000)
      expect(offer.d.lobby_id).toBe(lobbyId)
      // Still B's call: A placed nothing of its own.
      expect(await redis.get(`voice:room:${lobbyId}`)).toBe(holder)
      expect(await redis.hkeys(`voice:calls:${second.sessionId}`)).toEqual([lobbyId])

      first.peer.startSending()
      second.peer.startSending()
      await until(
        'each member to hear the other',
        () => first.peer.from(onA.id) >= 10 && second.peer.from(onB.id) >= 10,
        15_000,
      )

      // Leaving through A: B ends that member's place in its call and says so to the socket on A.
      second.peer.voiceStates(null)
      const closed = await second.peer.gateway.waitFor('LOBBY_VOICE_SERVER_CLOSE', 10_000)
      expect(closed.d).toMatchObject({ lobby_id: lobbyId, reason: 'left' })
      expect(await redis.hkeys(`voice:calls:${second.sessionId}`)).toEqual([])
      const heard = first.peer.from(onA.id)
      await Bun.sleep(500)
      expect(first.peer.from(onA.id) - heard).toBeLessThan(5)
    } finally {
      redis.disconnect()
    }
  }, 60_000)

  test('the call’s node stops: the member on A is told (server_stopping), and op 17 again places the call on a node that stays', async () => {
    const [a] = world.nodes
    const c = await world.start()
    const app = await newApp(world.env)
    const [onC, onA] = [await newUser(world.env), await newUser(world.env)]
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: onC.id }, { id: onA.id }] })
    const lobbyId = lobby.body.id as string
    const first = await peerOn(c.port, onC)
    first.peer.voiceStates(lobbyId)
    await first.peer.gateway.waitFor('LOBBY_VOICE_SERVER_OFFER', 10_000)
    const second = await peerOn(a.port, onA)
    second.peer.voiceStates(lobbyId)
    await second.peer.gateway.waitFor('LOBBY_VOICE_SERVER_OFFER', 10_000)
    await second.peer.gateway.waitFor((f) => f.t === 'LOBBY_MEMBER_CONNECT' && f.d.member.id === onA.id, 15_000)

    expect((await c.stop()).code).toBe(0)
    const closed = await second.peer.gateway.waitFor('LOBBY_VOICE_SERVER_CLOSE', 10_000)
    expect(closed.d).toMatchObject({ lobby_id: lobbyId, reason: 'server_stopping' })
    await second.peer.gateway.waitFor((f) => f.t === 'LOBBY_MEMBER_DISCONNECT' && f.d.member.id === onA.id, 5000)

    const offers = second.peer.gateway.dispatches('LOBBY_VOICE_SERVER_OFFER').length
    second.peer.voiceStates(lobbyId)
    await second.peer.gateway.waitFor(
      (f) =>
        f.t === 'LOBBY_VOICE_SERVER_OFFER' &&
        second.peer.gateway.dispatches('LOBBY_VOICE_SERVER_OFFER').length > offers,
      10_000,
    )
    const redis = openRedis(world.redis.url, 'test')
    try {
      const holder = await redis.get(`voice:room:${lobbyId}`)
      expect(holder).not.toBeNull()
      expect(await redis.hexists(`cluster:owned:${holder}`, `voice:room:${lobbyId}`)).toBe(1)
    } finally {
      redis.disconnect()
    }
  }, 60_000)
})
