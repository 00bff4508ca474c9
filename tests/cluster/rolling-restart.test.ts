// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// A rolling restart of three nodes under load drops no event and gives no client an error. Clients are Gateway sockets
// that behave as discord.js does: op 7 (Reconnect) or a close other than 1000/1001 makes them reconnect and Resume
// (session_id, seq); they reconnect to the next node of the address list the test keeps, as a round-robin load balancer
// would (the stopping node is taken out of the list first; a refused connection tries the next one). A writer posts
// lobby messages one after another throughout, each through the next node of the list; a connection refused or cut
// (a node stopping) is retried on the next node, as a load balancer retries — safe because every post carries a
// nonce with enforce_nonce (a retry of a stored message answers it again, 200). Any other answer counts as an error.
// Each node in turn gets SIGTERM, exits, and a new one starts. Counted at the end: every client saw every acknowledged
// message exactly once, in the writer's order with increasing `s`, and never an op 9.
import { afterAll, describe, expect, test } from 'bun:test'
import { call, newApp, newUser, present, useNodes } from './harness'

const world = await useNodes(3)

/** The addresses a load balancer sends to (ports of the nodes in rotation). */
let rotation: number[] = []
let turn = 0
const nextPort = (not?: number) => {
  const choices = rotation.filter((p) => p !== not)
  return choices[turn++ % choices.length]
}

type Frame = { op: number; d?: any; s?: number | null; t?: string | null }

/** A Gateway client that resumes on another node when told to (op 7) or cut off, as libraries do. */
class ResumingClient {
  ws?: WebSocket
  port = 0
  sessionId = ''
  seq = 0
  readonly messages: string[] = []
  readonly sequences: number[] = []
  invalidSessions = 0
  resumes = 0
  private beat?: Timer
  private reconnecting = false
  private closedByTest = false

  constructor(readonly token: string) {}

  async start(port: number): Promise<void> {
    await this.open(port)
    this.ws!.send(JSON.stringify({ op: 2, d: { token: this.token, properties: {}, intents: 0 } }))
    await this.until(() => this.sessionId !== '', 10_000)
  }

  private open(port: number): Promise<void> {
    this.port = port
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=10&encoding=json`)
    this.ws = ws
    return new Promise((resolve, reject) => {
      ws.onmessage = (event) => {
        const frame = JSON.parse(String(event.data)) as Frame
        if (frame.op === 10) {
          clearInterval(this.beat)
          this.beat = setInterval(() => this.send(1, this.seq), frame.d.heartbeat_interval)
          resolve()
        } else this.receive(frame)
      }
      ws.onerror = () => reject(new Error(`cannot connect to ${port}`))
      ws.onclose = (event) => {
        reject(new Error(`closed before hello: ${event.code}`))
        if (this.ws === ws && !this.closedByTest && event.code !== 1000 && event.code !== 1001) void this.resume()
      }
    })
  }

  private send(op: number, d: unknown) {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ op, d }))
  }

  private receive(frame: Frame) {
    if (frame.op === 0) {
      if (frame.s) this.seq = frame.s
      if (frame.t === 'READY') this.sessionId = frame.d.session_id
      if (frame.t === 'LOBBY_MESSAGE_CREATE') {
        this.messages.push(frame.d.content)
        this.sequences.push(frame.s!)
      }
    } else if (frame.op === 7) void this.resume()
    else if (frame.op === 9) this.invalidSessions += 1
  }

  /** Close this socket (4000, so the session stays resumable) and resume through the next node that answers. */
  private async resume() {
    if (this.reconnecting || this.closedByTest) return
    this.reconnecting = true
    const old = this.ws
    this.ws = undefined
    old?.close(4000, 'resume')
    for (let tries = 0; tries < 50 && !this.closedByTest; tries++) {
      try {
        await this.open(nextPort(this.port))
        this.send(6, { token: this.token, session_id: this.sessionId, seq: this.seq })
        this.resumes += 1
        break
      } catch {
        await Bun.sleep(50) // refused: the next node
      }
    }
    this.reconnecting = false
  }

  async until(check: () => boolean, timeoutMs: number) {
    for (const end = Date.now() + timeoutMs; !check(); await Bun.sleep(20))
      if (Date.now() > end) throw new Error('timed out')
  }

  close() {
    this.closedByTest = true
    clearInterval(this.beat)
    this.ws?.close(1000)
  }
}

const clients: ResumingClient[] = []
afterAll(() => {
  for (const c of clients) c.close()
})

describe.skipIf(!present)('a rolling restart of three nodes under load', () => {
  test('each node restarted in turn: every client gets every message once, in the writer’s order; no REST call fails', async () => {
    rotation = world.nodes.map((n) => n.port)
    const app = await newApp(world.env)
    const users = await Promise.all(Array.from({ length: 6 }, () => newUser(world.env)))
    const lobby = await call(world.nodes[0], 'POST', '/lobbies', app.bot, {
      members: users.map((u) => ({ id: u.id })),
    })
    expect(lobby.status).toBe(201)
    for (const [i, user] of users.entries()) {
      const client = new ResumingClient(user.token)
      await client.start(rotation[i % 3])
      clients.push(client)
    }

    // The writer: one post at a time, each through the next node; network errors retried on the next one.
    const acknowledged: string[] = []
    const errors: { status: number; body: unknown }[] = []
    let retries = 0
    let writing = true
    const post = async (content: string) => {
      for (;;) {
        try {
          const r = await call(
            { url: `http://127.0.0.1:${nextPort()}` },
            'POST',
            `/lobbies/${lobby.body.id}/messages`,
            app.bot,
            {
              content,
              nonce: content,
              enforce_nonce: true,
            },
          )
          if (r.status === 201 || r.status === 200) acknowledged.push(content)
          else errors.push(r)
          return
        } catch {
          retries += 1 // refused or cut by a stopping node: what a load balancer retries
          await Bun.sleep(10)
        }
      }
    }
    const writer = (async () => {
      for (let i = 0; writing; i++) await post(`m${i}`)
    })()

    for (let i = 0; i < 3; i++) {
      await Bun.sleep(1000)
      const old = world.nodes[i]
      rotation = rotation.filter((p) => p !== old.port)
      const stopped = await old.stop()
      expect(stopped.code).toBe(0)
      world.nodes[i] = await world.start()
      rotation.push(world.nodes[i].port)
    }
    await Bun.sleep(1000)
    writing = false
    await writer
    await post('end')

    // A client that misses the last one says what it got (the checks below say how it differs).
    for (const c of clients) await c.until(() => c.messages.at(-1) === 'end', 15_000).catch(() => {})
    expect(errors).toEqual([])
    expect(acknowledged.length).toBeGreaterThan(30)
    // Every client saw each acknowledged message once, in the writer's order (increasing `s`): each post's event is an
    // outbox row of its transaction, and a lobby's rows reach the log in commit order whichever node relays them.
    for (const c of clients) c.close()
    for (const c of clients) {
      expect(c.invalidSessions).toBe(0)
      expect(c.resumes).toBeGreaterThanOrEqual(1)
      expect(c.messages).toEqual(acknowledged)
      for (let i = 1; i < c.sequences.length; i++) expect(c.sequences[i]).toBeGreaterThan(c.sequences[i - 1])
    }
    console.log(
      `rolling restart: ${acknowledged.length} messages, ${retries} retried posts, ` +
        `${clients.reduce((n, c) => n + c.resumes, 0)} resumes by ${clients.length} clients`,
    )
  }, 120_000)
})
