// suite: one pass
// The SDK's Gateway against a real server behind a TCP balancer the test controls (tests/cluster/balancer.ts): a
// connection cut while messages are posted resumes with exactly the missed events, once each; a refreshed token
// (updateToken) keeps the socket and resumes with it; a refused token (4004) closes for good without a reconnect loop,
// at connect and mid-session; a Gateway nobody answers backs off to its cap and says so.
import { afterAll, describe, expect, test } from 'bun:test'
import { Client, type ConnectionError, type LobbyMessage, type ReconnectInfo } from '../../client/src/index'
import { startBalancer } from '../cluster/balancer'
import { freePort } from '../ops/process-helpers'
import { basic, startServer } from './server'

const balancer = startBalancer()
const port = freePort()
// The server names the balancer as its address (resume_gateway_url), as behind a load balancer.
const server = await startServer({ PORT: String(port), BASE_URL: balancer.url })
balancer.rotation = [port]
const direct = `http://127.0.0.1:${port}`
afterAll(() => balancer.stop())
const app = await server.newApp()
const [alice, bob] = await Promise.all([server.player(app), server.player(app)])
const clients: Client[] = []
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()))
})

function client(token: string, options: ConstructorParameters<typeof Client>[0] = {}): Client {
  const c = new Client({ baseUrl: balancer.url, token: `Bearer ${token}`, ...options })
  c.gateway.on('closed', () => undefined)
  clients.push(c)
  return c
}

const until = async (check: () => boolean, ms = 5000) => {
  for (const by = Date.now() + ms; !check(); await Bun.sleep(10)) if (Date.now() > by) throw new Error('timed out')
}

describe('resume', () => {
  test('a cut connection resumes with exactly the messages posted meanwhile, each once', async () => {
    const a = client(alice.bearer, { gateway: { backoff: 100 } })
    const poster = new Client({ baseUrl: direct, token: `Bearer ${bob.bearer}` })
    const lifecycle: string[] = []
    a.gateway.on('ready', () => lifecycle.push('ready'))
    a.gateway.on('resumed', () => lifecycle.push('resumed'))
    a.gateway.on('reconnecting', (info) => lifecycle.push(`reconnecting ${info.reason}`))
    await a.gateway.connect()
    const secret = `resume-${Date.now()}`
    const lobby = await a.lobbies.createOrJoin({ secret })
    const theirs = await poster.lobbies.createOrJoin({ secret })
    const got: string[] = []
    lobby.on('message', (m: LobbyMessage) => got.push(m.content))
    await theirs.send('before')
    await until(() => got.length === 1)
    const session = a.gateway.sessionId

    // The network drops: the reconnect waits at the balancer while three messages are posted.
    balancer.hold()
    for (const link of balancer.gatewayLinks()) link.client.terminate()
    await until(() => balancer.held().length === 1)
    for (const content of ['m1', 'm2', 'm3']) await theirs.send(content)
    balancer.release()
    await until(() => lifecycle.includes('resumed'))
    await theirs.send('after')
    await until(() => got.includes('after'))
    await Bun.sleep(100)
    expect(got).toEqual(['before', 'm1', 'm2', 'm3', 'after'])
    expect(lifecycle).toEqual(['ready', expect.stringMatching(/^reconnecting /), 'resumed'])
    expect(a.gateway.sessionId).toBe(session)
  })

  test('updateToken: a refreshed token keeps the socket, and the next resume sends it', async () => {
    const player = await server.player(app)
    const sent: string[] = []
    // Records what the SDK sends, to see which token the resume carries.
    class Recording extends WebSocket {
      override send(data: string) {
        sent.push(data)
        super.send(data)
      }
    }
    const a = client(player.bearer, { gateway: { backoff: 100, WebSocket: Recording } })
    await a.gateway.connect()
    const socket = (a.gateway as unknown as { socket: WebSocket }).socket
    const refreshed = await a.rest.post('/oauth2/token', {
      auth: basic(app),
      form: { grant_type: 'refresh_token', refresh_token: player.refresh },
    })
    expect(refreshed.access_token).not.toBe(player.bearer)
    const resumed = new Promise<void>((resolve) => a.gateway.once('resumed', resolve))
    a.updateToken(refreshed.access_token, 'Bearer')
    await Bun.sleep(100)
    expect((a.gateway as unknown as { socket: WebSocket }).socket).toBe(socket)
    expect(a.gateway.connected).toBe(true)
    for (const link of balancer.gatewayLinks()) link.client.terminate()
    await resumed
    const resume = sent.map((f) => JSON.parse(f)).find((f) => f.op === 6)
    expect(resume.d.token).toBe(`Bearer ${refreshed.access_token}`)
  })
})

describe('a token that stops working', () => {
  test('refused at connect: connect() rejects with 4004, closed once, no reconnect', async () => {
    // A loop would show within the wait below (backoff 50 ms).
    const c = client('not-a-real-token', { gateway: { backoff: 50 } })
    const events: string[] = []
    c.gateway.on('closed', (info) => events.push(`closed ${info.code}`))
    c.gateway.on('reconnecting', () => events.push('reconnecting'))
    const error = (await c.gateway.connect().catch((e) => e)) as ConnectionError
    expect(error.name).toBe('ConnectionError')
    expect(error.closeCode).toBe(4004)
    expect(error.message).toContain('authentication failed')
    await Bun.sleep(800)
    expect(events).toEqual(['closed 4004'])
  })

  test('revoked mid-session: closed with 4004, no loop', async () => {
    const bearer = (await server.player(app)).bearer
    const c = client(bearer, { gateway: { backoff: 50 } })
    const events: string[] = []
    c.gateway.on('closed', (info) => events.push(`closed ${info.code}`))
    c.gateway.on('reconnecting', () => events.push('reconnecting'))
    await c.gateway.connect()
    await c.rest.post('/oauth2/token/revoke', { auth: basic(app), form: { token: bearer } })
    await until(() => events.length > 0)
    await Bun.sleep(800)
    expect(events).toEqual(['closed 4004'])
    expect(c.gateway.connected).toBe(false)
  })
})

test('a Gateway that keeps failing backs off to its cap, says so, and gives up when told', async () => {
  const nowhere = new Client({
    baseUrl: `http://127.0.0.1:${freePort()}`,
    token: 'x',
    gateway: { backoff: 20, maxBackoff: 80, maxReconnectAttempts: 6 },
  })
  const seen: ReconnectInfo[] = []
  nowhere.gateway.on('reconnecting', (info) => seen.push(info))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => nowhere.gateway.on('closed', resolve))
  const error = await nowhere.gateway.connect().catch((e) => e)
  expect(error.name).toBe('ConnectionError')
  expect((await closed).reason).toContain('gave up after 6 reconnect attempts')
  expect(seen.map((s) => s.attempt)).toEqual([1, 2, 3, 4, 5, 6])
  expect(seen.every((s) => s.delay <= 80)).toBe(true)
  expect(seen.map((s) => s.capped)).toEqual([false, false, true, true, true, true])
})
