// Gateway transport compression (`?compress=zlib-stream`), as Discord frames it: one zlib context per connection,
// every frame binary and ending in 00 00 FF FF. Checked with a hand-written client (one inflate context, frame by
// frame) and with @discordjs/ws with compression on.
import { afterEach, describe, expect, test } from 'bun:test'
import { constants, createInflate, type Inflate } from 'node:zlib'
import { REST } from '@discordjs/rest'
import { CompressionMethod, WebSocketManager, WebSocketShardEvents } from '@discordjs/ws'
import { events, topics } from '../../src/gateway/bus'
import { requestReconnect } from '../../src/gateway/dispatch'
import { allSessions } from '../../src/gateway/sessions'
import { GatewayClient } from '../gateway-client'
import { makeApp, makeUser, resetWorld, server } from '../helpers'

type Frame = { op: number; d: any; s: number | null; t: string | null }

/** A Gateway client that asks for zlib-stream and inflates each frame with one context for the connection. */
class ZlibClient {
  readonly frames: Frame[] = []
  readonly raw: Uint8Array[] = []
  textFrames = 0
  closed: { code: number } | null = null
  private inflate: Inflate = createInflate()
  private out: Buffer[] = []
  private chain = Promise.resolve()

  constructor(readonly ws: WebSocket) {
    ws.binaryType = 'arraybuffer'
    this.inflate.on('data', (c: Buffer) => this.out.push(c))
    ws.onmessage = (event) => {
      if (typeof event.data === 'string') {
        this.textFrames += 1
        return
      }
      const bytes = new Uint8Array(event.data as ArrayBuffer)
      this.raw.push(bytes)
      this.chain = this.chain.then(
        () =>
          new Promise<void>((resolve) => {
            this.inflate.write(bytes)
            this.inflate.flush(constants.Z_SYNC_FLUSH, () => {
              const text = Buffer.concat(this.out).toString()
              this.out = []
              this.frames.push(JSON.parse(text)) // one frame = exactly one payload
              resolve()
            })
          }),
      )
    }
    ws.onclose = (event) => (this.closed = { code: event.code })
  }

  static async connect(query = '?v=10&encoding=json&compress=zlib-stream') {
    const { port } = await server()
    const client = new ZlibClient(new WebSocket(`ws://127.0.0.1:${port}/gateway${query}`))
    await new Promise<void>((resolve, reject) => {
      client.ws.onopen = () => resolve()
      client.ws.onerror = () => reject(new Error('websocket error'))
    })
    return client
  }

  send(op: number, d: unknown) {
    this.ws.send(JSON.stringify({ op, d }))
  }

  async waitFor(match: (f: Frame) => boolean, ms = 3000): Promise<Frame> {
    const end = Date.now() + ms
    for (;;) {
      await this.chain
      const found = this.frames.find(match)
      if (found) return found
      if (Date.now() > end)
        throw new Error(`no matching frame; got ${JSON.stringify(this.frames.map((f) => f.t ?? f.op))}`)
      await Bun.sleep(10)
    }
  }

  async waitForClose(ms = 3000) {
    const end = Date.now() + ms
    while (!this.closed && Date.now() < end) await Bun.sleep(10)
    return this.closed
  }
}

const suffixOk = (b: Uint8Array) =>
  b.length >= 4 && b.at(-4) === 0 && b.at(-3) === 0 && b.at(-2) === 0xff && b.at(-1) === 0xff

const opened: { close(): void }[] = []
let manager: WebSocketManager | undefined
afterEach(async () => {
  opened.splice(0).forEach((c) => c.close())
  await manager?.destroy()
  manager = undefined
  resetWorld()
})

describe('zlib-stream', () => {
  test("every frame is binary, ends in 00 00 FF FF and inflates to one payload with the connection's one context", async () => {
    const user = await makeUser()
    const z = await ZlibClient.connect()
    opened.push(z.ws)
    const hello = await z.waitFor((f) => f.op === 10)
    expect(hello.d.heartbeat_interval).toBeNumber()
    z.send(2, { token: user.token, properties: {}, intents: 0 })
    const ready = await z.waitFor((f) => f.t === 'READY')
    expect(ready.d.user.id).toBe(user.id)
    z.send(1, ready.s)
    await z.waitFor((f) => f.op === 11)
    for (let i = 0; i < 20; i++)
      events.publish(topics.account(user.id), 'PING_EVENT', { i, text: 'the same words again and again' })
    await z.waitFor((f) => f.t === 'PING_EVENT' && f.d.i === 19)
    expect(z.textFrames).toBe(0)
    expect(z.raw.every(suffixOk)).toBe(true)
    expect(z.frames.filter((f) => f.t === 'PING_EVENT').map((f) => f.d.i)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    )
    // The shared context pays off: repeated payloads shrink to a few bytes.
    expect(z.raw.at(-1)!.length).toBeLessThan(30)
  })

  test('one event reaches compressed and plain sockets of the same topic, once each, in order', async () => {
    const user = await makeUser()
    const a = await ZlibClient.connect()
    const b = await ZlibClient.connect()
    opened.push(a.ws, b.ws)
    for (const z of [a, b]) {
      await z.waitFor((f) => f.op === 10)
      z.send(2, { token: user.token, properties: {}, intents: 0 })
      await z.waitFor((f) => f.t === 'READY')
    }
    const { client: plain } = await GatewayClient.identified(user.token)
    opened.push(plain)
    events.publish([topics.account(user.id), topics.account(user.id)], 'BOTH_TOPICS', { n: 1 })
    events.publish(topics.account(user.id), 'AFTER', { n: 2 })
    for (const z of [a, b]) {
      await z.waitFor((f) => f.t === 'AFTER')
      expect(z.frames.filter((f) => f.t === 'BOTH_TOPICS')).toHaveLength(1)
      const seqs = z.frames.filter((f) => f.op === 0).map((f) => f.s!)
      expect(seqs).toEqual([...seqs].sort((x, y) => x - y))
    }
    expect((await plain.waitFor('AFTER')).d).toEqual({ n: 2 })
  })

  test('frames queued before a close go out first (a dispatch, then 4004)', async () => {
    const user = await makeUser()
    const z = await ZlibClient.connect()
    opened.push(z.ws)
    await z.waitFor((f) => f.op === 10)
    z.send(2, { token: user.token, properties: {}, intents: 0 })
    const ready = await z.waitFor((f) => f.t === 'READY')
    events.publish(topics.account(user.id), 'LAST_WORDS', { bye: true })
    events.closeUser(user.id, 4004)
    expect((await z.waitForClose())?.code).toBe(4004)
    await z.waitFor((f) => f.t === 'LAST_WORDS')
    expect(ready.s).toBeNumber()
  })

  test('a resumed session keeps its compression on the new socket (with a new context)', async () => {
    const user = await makeUser()
    const z = await ZlibClient.connect()
    await z.waitFor((f) => f.op === 10)
    z.send(2, { token: user.token, properties: {}, intents: 0 })
    const ready = await z.waitFor((f) => f.t === 'READY')
    z.ws.close(4000)
    await z.waitForClose()
    events.publish(topics.account(user.id), 'MISSED', { n: 1 })
    const again = await ZlibClient.connect()
    opened.push(again.ws)
    await again.waitFor((f) => f.op === 10)
    again.send(6, { token: user.token, session_id: ready.d.session_id, seq: ready.s })
    await again.waitFor((f) => f.t === 'RESUMED')
    expect(again.frames.filter((f) => f.t === 'MISSED')).toHaveLength(1)
    events.publish(topics.account(user.id), 'LIVE', { n: 2 })
    await again.waitFor((f) => f.t === 'LIVE')
    expect(again.textFrames).toBe(0)
  })

  test('without compress (or with one we do not offer) frames stay plain JSON text', async () => {
    const z = await ZlibClient.connect('?v=10&encoding=json&compress=zstd-stream')
    opened.push(z.ws)
    const end = Date.now() + 2000
    while (z.textFrames === 0 && Date.now() < end) await Bun.sleep(10)
    expect(z.textFrames).toBe(1)
    expect(z.raw).toHaveLength(0)
  })
})

describe('@discordjs/ws with compression', () => {
  test('connects with zlib-stream, gets READY and dispatches, and resumes after op 7', async () => {
    const { url } = await server()
    const app = await makeApp()
    const rest = new REST({ api: `${url}/api`, version: '10', retries: 0 }).setToken(app.bot_token)
    manager = new WebSocketManager({
      token: app.bot_token,
      intents: 0,
      rest,
      version: '10',
      compression: CompressionMethod.ZlibNative,
    })
    const dispatched: { t: string; d: any }[] = []
    manager.on(WebSocketShardEvents.Dispatch, (payload: any) => dispatched.push({ t: payload.t, d: payload.d }))
    const once = (event: string) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${event}`)), 5000)
        manager!.once(event as never, (() => (clearTimeout(timer), resolve(undefined))) as never)
      })
    const ready = once(WebSocketShardEvents.Ready)
    await manager.connect()
    await ready
    const me = dispatched.find((e) => e.t === 'READY')!.d.user
    expect(me.bot).toBe(true)
    // The library reads plain text frames too: make sure the server really compresses for it.
    const mine = () => [...allSessions().values()].filter((s) => s.caller.userId === me.id && s.ws)
    expect(mine().map((s) => s.compressed)).toEqual([true])
    events.publish(topics.app(app.id), 'COMPRESSED_HELLO', { words: 'compressed '.repeat(50) })
    const resumed = once(WebSocketShardEvents.Resumed)
    requestReconnect(me.id)
    events.publish(topics.app(app.id), 'WHILE_AWAY', { n: 1 })
    await resumed
    events.publish(topics.app(app.id), 'AFTER_RESUME', { n: 2 })
    const end = Date.now() + 3000
    while (!dispatched.some((e) => e.t === 'AFTER_RESUME') && Date.now() < end) await Bun.sleep(20)
    expect(dispatched.find((e) => e.t === 'COMPRESSED_HELLO')?.d.words).toBe('compressed '.repeat(50))
    expect(dispatched.filter((e) => e.t === 'WHILE_AWAY')).toHaveLength(1)
    expect(dispatched.some((e) => e.t === 'AFTER_RESUME')).toBe(true)
    expect(dispatched.filter((e) => e.t === 'READY')).toHaveLength(1)
    expect(mine().map((s) => s.compressed)).toEqual([true])
  })
})
