// A small Gateway client for tests: connect, identify, wait for dispatches, assert silence, watch closes.
// It heartbeats on its own (the test server announces a 1 s interval) unless told not to.
import { server } from './helpers'

export type Frame = { op: number; d: any; s: number | null; t: string | null }

export class GatewayClient {
  readonly frames: Frame[] = []
  hello!: Frame
  lastSeq: number | null = null
  closed: { code: number; reason: string } | null = null
  private waiters: { match: (f: Frame) => boolean; resolve: (f: Frame) => void }[] = []
  private closeWaiters: ((c: { code: number; reason: string }) => void)[] = []
  private beat?: Timer

  private constructor(readonly ws: WebSocket) {}

  /** Open a socket to /gateway and wait for Hello. */
  static async connect(options: { query?: string; heartbeat?: boolean; port?: number } = {}): Promise<GatewayClient> {
    const port = options.port ?? (await server()).port
    const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway${options.query ?? '?v=10&encoding=json'}`)
    const client = new GatewayClient(ws)
    ws.onmessage = (event) => client.receive(JSON.parse(String(event.data)))
    ws.onclose = (event) => client.onClosed(event.code, event.reason)
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve()
      ws.onerror = () => reject(new Error('websocket error'))
    })
    if (options.query?.includes('v=8')) return client // the server closes at once; no Hello
    client.hello = await client.waitForOp(10)
    if (options.heartbeat !== false) client.startHeartbeat()
    return client
  }

  /** Connect and identify; resolves with READY's d. */
  static async identified(
    token: string,
    extra: Record<string, unknown> = {},
    port?: number,
  ): Promise<{ client: GatewayClient; ready: any }> {
    const client = await GatewayClient.connect({ port })
    const ready = await client.identify(token, extra)
    return { client, ready }
  }

  private receive(frame: Frame) {
    if (typeof frame.s === 'number') this.lastSeq = frame.s
    this.frames.push(frame)
    for (const w of [...this.waiters]) {
      if (w.match(frame)) {
        this.waiters.splice(this.waiters.indexOf(w), 1)
        w.resolve(frame)
      }
    }
  }

  private onClosed(code: number, reason: string) {
    clearInterval(this.beat)
    this.closed = { code, reason }
    for (const w of this.closeWaiters) w(this.closed)
  }

  startHeartbeat() {
    const interval = this.hello?.d?.heartbeat_interval ?? 1000
    this.beat = setInterval(() => this.send(1, this.lastSeq), Math.max(50, interval / 3))
  }

  stopHeartbeat() {
    clearInterval(this.beat)
  }

  send(op: number, d: unknown) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ op, d }))
  }

  sendRaw(data: string | Uint8Array) {
    this.ws.send(data)
  }

  async identify(token: string, extra: Record<string, unknown> = {}): Promise<any> {
    this.send(2, { token, properties: { os: 'linux', browser: 'test', device: 'test' }, intents: 0, ...extra })
    return (await this.waitFor('READY')).d
  }

  /** The first dispatch of this type received from now on or already received after `since` frames. */
  waitFor(type: string | ((f: Frame) => boolean), timeoutMs = 3000, { since = 0 } = {}): Promise<Frame> {
    const match = typeof type === 'string' ? (f: Frame) => f.op === 0 && f.t === type : type
    const already = this.frames.slice(since).find(match)
    if (already) return Promise.resolve(already)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `no ${typeof type === 'string' ? type : 'matching frame'} within ${timeoutMs} ms; got ${JSON.stringify(this.frames.map((f) => f.t ?? f.op))}`,
            ),
          ),
        timeoutMs,
      )
      this.waiters.push({ match, resolve: (f) => (clearTimeout(timer), resolve(f)) })
    })
  }

  waitForOp(op: number, timeoutMs = 3000): Promise<Frame> {
    return this.waitFor((f) => f.op === op, timeoutMs)
  }

  /** Dispatches of a type received so far. */
  dispatches(type: string): Frame[] {
    return this.frames.filter((f) => f.op === 0 && f.t === type)
  }

  /** Assert that no dispatch of this type arrives within `ms`. */
  async expectNo(type: string, ms = 250): Promise<void> {
    const before = this.dispatches(type).length
    await Bun.sleep(ms)
    const after = this.dispatches(type)
    if (after.length > before)
      throw new Error(`unexpected ${type}: ${JSON.stringify(after.slice(before).map((f) => f.d))}`)
  }

  waitForClose(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`socket not closed within ${timeoutMs} ms`)), timeoutMs)
      this.closeWaiters.push((c) => (clearTimeout(timer), resolve(c)))
    })
  }

  close(code = 1000) {
    clearInterval(this.beat)
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code)
  }
}

/** Clients a test file opens and closes after each test: `const sockets = tracked(); afterEach(sockets.closeAll)`. */
export function tracked() {
  const open: GatewayClient[] = []
  return {
    async connect(options?: Parameters<typeof GatewayClient.connect>[0]) {
      const c = await GatewayClient.connect(options)
      open.push(c)
      return c
    },
    /** A socket identified with the token, past its READY. */
    async identified(token: string) {
      const { client } = await GatewayClient.identified(token)
      open.push(client)
      return client
    },
    closeAll() {
      open.splice(0).forEach((c) => c.close())
    },
  }
}
