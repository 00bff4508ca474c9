// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The dead-node clean-up (src/cluster/cleanup.ts) with three real nodes: C holds a member's Gateway session in a lobby
// call placed on C, and a remote-auth desktop. C is SIGKILLed: nothing of it says goodbye. Once its node-id lease is
// gone (NODE_LEASE_MS, 8 s here) another node ends what C left: at once its call and desktop (their media and socket died with C) — the lobby's
// member on A hears the member leave the call (LOBBY_MEMBER_DISCONNECT, LOBBY_VOICE_STATE_UPDATE), the member's voice
// row is cleared, the desktop's row deleted — and, once the resume window (15 s here) has passed with no Resume, its
// sessions: C's lists in Redis are gone.
import { afterAll, describe, expect, test } from 'bun:test'
import { openRedis } from '../../src/cluster/redis'
import { DesktopClient } from '../remote-auth/desktop-client'
import { GatewayClient } from '../gateway-client'
import { VoicePeer } from '../voice/peer'
import { call, newApp, newUser, present, useNodes } from './harness'

const world = await useNodes(3, { GATEWAY_RESUME_WINDOW_MS: '15000', NODE_LEASE_MS: '8000' })
const open: { close(): unknown }[] = []
afterAll(async () => {
  for (const c of open) await c.close()
})

describe.skipIf(!present)('a node killed with a session in a call and a desktop', () => {
  test('another node ends its call and its desktop at once, its session after the resume window', async () => {
    const [a, , c] = world.nodes
    const app = await newApp(world.env)
    const [caller, watcher] = [await newUser(world.env), await newUser(world.env)]
    const lobby = await call(a, 'POST', '/lobbies', app.bot, { members: [{ id: caller.id }, { id: watcher.id }] })
    expect(lobby.status).toBe(201)
    const lobbyId = lobby.body.id as string

    const { client: watching } = await GatewayClient.identified(watcher.token, {}, a.port)
    open.push(watching)
    const { client: onC, ready } = await GatewayClient.identified(caller.token, {}, c.port)
    const peer = new VoicePeer(onC, caller.id)
    open.push(peer)
    peer.voiceStates(lobbyId)
    await watching.waitFor((f) => f.t === 'LOBBY_MEMBER_CONNECT' && f.d.member.id === caller.id, 15_000)
    const desktop = await DesktopClient.ready('nonce', { port: c.port })
    open.push({ close: () => desktop.ws.close() })

    const sql = world.database.sql
    const voiceRow = async () =>
      (
        await sql`SELECT voice_session_id AS v FROM lobby_members WHERE lobby_id = ${lobbyId} AND user_id = ${caller.id}`
      )[0].v
    const desktopRows = async () =>
      Number(
        (await sql`SELECT count(*) AS n FROM remote_auth_desktops WHERE fingerprint = ${desktop.fingerprint}`)[0].n,
      )
    expect(await voiceRow()).toBe(ready.session_id)
    expect(await desktopRows()).toBe(1)
    const redis = openRedis(world.redis.url, 'test')
    try {
      // C's list of its sessions (the one that names the caller's).
      let cSessions: string | undefined
      for (const key of await redis.keys('gw:node-sessions:*'))
        if (await redis.hexists(key, ready.session_id)) cSessions = key
      expect(cSessions).toBeDefined()

      c.proc.kill('SIGKILL')
      await c.proc.exited
      // Its lease (NODE_LEASE_MS: 8 s here) and a round of the clean-up (5 s).
      const left = await watching.waitFor(
        (f) => f.t === 'LOBBY_MEMBER_DISCONNECT' && f.d.member.id === caller.id,
        45_000,
      )
      expect(left.d.lobby_id).toBe(lobbyId)
      await watching.waitFor(
        (f) => f.t === 'LOBBY_VOICE_STATE_UPDATE' && f.d.user_id === caller.id && f.d.connected === false,
        5000,
      )
      expect(await voiceRow()).toBeNull()
      for (let i = 0; i < 50 && (await desktopRows()) > 0; i++) await Bun.sleep(100)
      expect(await desktopRows()).toBe(0)
      expect(await redis.exists(`voice:room:${lobbyId}`)).toBe(0)
      // The session could still be resumed elsewhere: C's list of its sessions waits for the window.
      expect(await redis.exists(cSessions!)).toBe(1)
      for (let i = 0; i < 300 && (await redis.exists(cSessions!)); i++) await Bun.sleep(100)
      expect(await redis.exists(cSessions!)).toBe(0)
      expect(watching.dispatches('LOBBY_MEMBER_DISCONNECT')).toHaveLength(1)
    } finally {
      redis.disconnect()
    }
  }, 90_000)
})
