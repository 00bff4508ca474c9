// suite: one pass
// A server restarted under the SDK (one node on SQLite): SIGTERM sends op 7, the SDK reconnects on its own, backing
// off while nobody listens, and once the server is back (its sessions gone with it) identifies anew: `ready` again,
// its live lobby read again and still live for new messages.
import { afterAll, expect, test } from 'bun:test'
import { Client, type ReconnectInfo } from '../../client/src/index'
import { freePort, serve } from '../ops/process-helpers'
import { startServer } from './server'

const port = freePort()
const server = await startServer({ PORT: String(port) })
const app = await server.newApp()
const [alice, bob] = await Promise.all([server.player(app), server.player(app)])
const a = new Client({
  baseUrl: server.url,
  token: `Bearer ${alice.bearer}`,
  gateway: { backoff: 100, maxBackoff: 400 },
})
const b = new Client({ baseUrl: server.url, token: `Bearer ${bob.bearer}` })
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

test('op 7 on SIGTERM: the SDK reconnects by itself and carries on after the restart', async () => {
  const lifecycle: string[] = []
  const reconnects: ReconnectInfo[] = []
  a.gateway.on('ready', () => lifecycle.push('ready'))
  a.gateway.on('resumed', () => lifecycle.push('resumed'))
  a.gateway.on('reconnecting', (info) => reconnects.push(info))
  await a.gateway.connect()
  const secret = `restart-${Date.now()}`
  const lobby = await a.lobbies.createOrJoin({ secret })
  const got: string[] = []
  lobby.on('message', (m) => got.push(m.content))

  const stopped = await server.stop()
  expect(stopped.code).toBe(0)
  expect(reconnects[0]).toMatchObject({ attempt: 1, reason: 'op 7' })
  // Nobody listens for a while: the SDK keeps trying, backing off.
  await Bun.sleep(800)
  expect(reconnects.length).toBeGreaterThan(1)
  const again = await serve(server.env)
  try {
    for (const by = Date.now() + 10_000; lifecycle.length < 2 && Date.now() < by; ) await Bun.sleep(20)
    // The restarted server has no sessions: a new one (op 9, then identify).
    expect(lifecycle).toEqual(['ready', 'ready'])
    expect(lobby.active).toBe(true)
    const theirs = await b.lobbies.createOrJoin({ secret })
    await theirs.send('back')
    for (const by = Date.now() + 5000; !got.includes('back') && Date.now() < by; ) await Bun.sleep(20)
    expect(got).toEqual(['back'])
  } finally {
    await a.close()
    await again.stop()
  }
})
