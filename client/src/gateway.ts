// The Gateway, so that a game never handles a socket: identify (intents), heartbeat with jitter (a missed ack means a
// dead socket), zlib-stream, resume at `resume_gateway_url` (any node behind the balancer) after a drop, op 7, or
// op 9 with d=true; identify anew after op 9 with d=false; reconnect with capped exponential backoff and jitter; the
// 120-frames-a-minute send limit kept by a queue; typed dispatches and `ready` / `resumed` / `closed` events. A token
// the server refuses (4004) closes it for good with that reason; a refreshed token (client.updateToken) is what the
// next resume sends, and the socket is kept.
import type { Client } from './client'
import { Emitter } from './emitter'
import { ConnectionError } from './errors'
import type { Dispatches, Ready } from './events'
import { Inflater } from './inflate'

export type GatewayOptions = {
  /** Identify's intents (the server accepts and ignores them: a session gets its topics' events). Default 0. */
  intents?: number
  /** zlib-stream transport compression (DecompressionStream). Default: on where DecompressionStream exists. */
  compress?: boolean
  /** Identify's `properties`. */
  properties?: { os?: string; browser?: string; device?: string }
  /** The Gateway's URL; default `${baseUrl}/gateway` as ws(s). */
  url?: string
  /**
   * Resume at READY's `resume_gateway_url` (default true: behind a balancer, any node). false: resume where it
   * identified (a page whose Content-Security-Policy allows only its own origin).
   */
  followResumeUrl?: boolean
  /** The first reconnect waits up to this (ms, jittered), doubling per failed attempt up to `maxBackoff`. Default 1000. */
  backoff?: number
  /** The longest wait between reconnects (ms). Default 30 000. */
  maxBackoff?: number
  /** Give up after this many reconnects in a row without a session (closed with reason). Default: never. */
  maxReconnectAttempts?: number
  /** connect() rejects when no READY came within this (ms). Default 30 000. */
  connectTimeout?: number
  /** Frames the app may send a minute (ops 17, 100, …; heartbeats, identify and resume apart). Default 110. */
  sendLimit?: number
  /** Another WebSocket (Node 20 without --experimental-websocket: the `ws` package's). */
  WebSocket?: typeof WebSocket
}

export type CloseInfo = { code: number; reason: string }
export type ReconnectInfo = {
  /** Reconnects in a row without a session coming back. */
  attempt: number
  /** Wait before this attempt (ms). */
  delay: number
  /** The backoff reached its cap (`maxBackoff`): the Gateway keeps failing. */
  capped: boolean
  /** The last socket's close code (4900: closed by this client to reconnect). */
  code: number
  /** Why: `op 7`, `op 9`, `no heartbeat ack`, `unreadable frame`, or the close's reason. */
  reason: string
}

type DispatchListeners = { [K in keyof Dispatches]: (data: Dispatches[K], seq: number) => void }
export type GatewayEvents = DispatchListeners & {
  /** A new session (first connect, or after the old one could not be resumed: state from before it is gone). */
  ready: (data: Ready) => void
  /** The same session on a new socket; the dispatches missed meanwhile came before this, each once. */
  resumed: () => void
  /** The socket dropped; the Gateway reconnects by itself after `delay`. */
  reconnecting: (info: ReconnectInfo) => void
  /** For good: close(), a refused token (4004), another fatal close code, or `maxReconnectAttempts` spent. */
  closed: (info: CloseInfo) => void
  /** Every dispatch (op 0) after READY, with its name. */
  dispatch: (type: string, data: unknown, seq: number) => void
  // Dispatches the SDK does not type.
  [event: string]: (...args: any[]) => void
}

/** Close codes after which reconnecting cannot help (Discord's list). */
const FATAL: Record<number, string> = {
  4004: 'authentication failed: the token was refused or its session ended',
  4010: 'invalid shard',
  4011: 'sharding required',
  4012: 'invalid API version',
  4013: 'invalid intents',
  4014: 'disallowed intents',
}
/** A socket the client ends itself to reconnect: the session stays resumable (not 1000/1001). */
const RECONNECT_CLOSE = 4900
const WINDOW_MS = 60_000
const MAX_WAITING = 200

type Frame = { op: number; d?: any; s?: number | null; t?: string | null }

export class Gateway extends Emitter<GatewayEvents> {
  private socket?: WebSocket
  private inflater?: Inflater
  private beat?: ReturnType<typeof setTimeout>
  private acked = true
  private seq: number | null = null
  private sessionIdValue?: string
  private resumeUrl?: string
  private readyData?: Ready
  /** READY or RESUMED came on the current socket. */
  private live = false
  private stopped = true
  private attempts = 0
  private reconnectTimer?: ReturnType<typeof setTimeout>
  private flushTimer?: ReturnType<typeof setTimeout>
  /** App frames waiting for the session (between sockets) or for room in the send window. */
  private waiting: string[] = []
  private sentAt: number[] = []
  private pending?: {
    promise: Promise<Ready>
    resolve: (ready: Ready) => void
    reject: (error: Error) => void
    timer: ReturnType<typeof setTimeout>
  }

  constructor(
    private readonly client: Client,
    private readonly options: GatewayOptions = {},
  ) {
    super()
  }

  /** The session is up on an open socket. */
  get connected(): boolean {
    return this.live && this.socket?.readyState === 1
  }
  /** The session's id (kept across resumes), while there is one. */
  get sessionId(): string | undefined {
    return this.sessionIdValue
  }
  /** READY's data of the current session. */
  get ready(): Ready | undefined {
    return this.readyData
  }
  /** The last sequence number received. */
  get sequence(): number | null {
    return this.seq
  }

  /** Connect and identify; resolves at READY (at once when the session is up). */
  connect(): Promise<Ready> {
    if (this.live && this.readyData) return Promise.resolve(this.readyData)
    if (this.pending) return this.pending.promise
    let resolve!: (ready: Ready) => void
    let reject!: (error: Error) => void
    const promise = new Promise<Ready>((res, rej) => {
      resolve = res
      reject = rej
    })
    const ms = this.options.connectTimeout ?? 30_000
    const timer = setTimeout(() => {
      const reason = `no READY within ${ms} ms`
      this.fail(new ConnectionError(`The Gateway sent ${reason}.`))
      this.shutdown(1000)
      this.emit('closed', { code: 0, reason })
    }, ms)
    this.pending = { promise, resolve, reject, timer }
    if (this.stopped) {
      this.stopped = false
      this.attempts = 0
      this.open()
    }
    return promise
  }

  /** Close the session for good (its socket with 1000, so the server ends it at once). */
  async close(): Promise<void> {
    const wasUp = !this.stopped
    this.fail(new ConnectionError('The Gateway was closed.'))
    this.shutdown(1000)
    if (wasUp) this.emit('closed', { code: 1000, reason: 'closed by the client' })
  }

  /**
   * Send a frame on the session. While the session is between sockets or the send window (120 a minute) is full it
   * waits, in order; false when there is no session to send it on, or too many wait.
   */
  send(op: number, d: unknown): boolean {
    if (this.stopped || (!this.live && this.sessionIdValue === undefined)) return false
    if (this.waiting.length >= MAX_WAITING) return false
    this.waiting.push(JSON.stringify({ op, d }))
    this.flush()
    return true
  }

  private fail(error: Error): void {
    const pending = this.pending
    if (!pending) return
    this.pending = undefined
    clearTimeout(pending.timer)
    pending.reject(error)
  }

  /** Stop everything: no socket, no timers, no session. */
  private shutdown(code: number): void {
    this.stopped = true
    clearTimeout(this.reconnectTimer)
    clearTimeout(this.flushTimer)
    const socket = this.socket
    this.detach()
    if (socket && socket.readyState <= 1) socket.close(code)
    this.forget()
  }

  private forget(): void {
    this.sessionIdValue = undefined
    this.resumeUrl = undefined
    this.readyData = undefined
    this.seq = null
    this.waiting = []
  }

  private url(resume: boolean): string {
    const base =
      (resume && this.options.followResumeUrl !== false && this.resumeUrl) ||
      this.options.url ||
      `${this.client.baseUrl.replace(/^http/, 'ws').replace(/\/+$/, '')}/gateway`
    const url = new URL(base)
    url.searchParams.set('v', '10')
    url.searchParams.set('encoding', 'json')
    if (this.compress) url.searchParams.set('compress', 'zlib-stream')
    return url.toString()
  }

  private get compress(): boolean {
    return this.options.compress ?? typeof DecompressionStream === 'function'
  }

  private open(): void {
    const WS = this.options.WebSocket ?? globalThis.WebSocket
    if (!WS) {
      this.fatal(0, 'no WebSocket in this runtime (Node 20: run with --experimental-websocket, or pass one)')
      return
    }
    let url: string
    try {
      url = this.url(this.sessionIdValue !== undefined)
    } catch (error) {
      this.fatal(0, `the Gateway URL is not valid: ${String((error as Error)?.message ?? error)}`)
      return
    }
    let socket: WebSocket
    try {
      socket = new WS(url)
    } catch (error) {
      // Refused before any network (a browser's policy, a socket limit): a failed attempt like any other.
      this.reconnect(0, `could not open a socket: ${String((error as Error)?.message ?? error)}`)
      return
    }
    socket.binaryType = 'arraybuffer'
    this.socket = socket
    this.live = false
    this.acked = true
    if (this.compress)
      this.inflater = new Inflater(
        (text) => this.receive(socket, text),
        () => this.drop(socket, 'unreadable frame'),
      )
    socket.onmessage = (event) => {
      if (typeof event.data === 'string') this.receive(socket, event.data)
      else if (event.data instanceof ArrayBuffer) this.inflater?.push(new Uint8Array(event.data))
    }
    socket.onclose = (event) => this.closedBy(socket, event.code, event.reason)
    // An error is followed by a close; the close decides.
    socket.onerror = () => undefined
  }

  /** Forget the current socket: its late events are ignored. */
  private detach(): void {
    clearTimeout(this.beat)
    this.inflater?.end()
    this.inflater = undefined
    const socket = this.socket
    this.socket = undefined
    this.live = false
    if (socket) socket.onmessage = socket.onclose = socket.onerror = null
  }

  /**
   * End this socket from here and reconnect (resuming when the session allows): a zombie, a frame that cannot be
   * read, op 7. The socket is let go at once: on a dead network its close could take minutes.
   */
  private drop(socket: WebSocket, reason: string, delay?: number): void {
    if (socket !== this.socket) return
    this.detach()
    try {
      socket.close(RECONNECT_CLOSE)
    } catch {}
    this.reconnect(RECONNECT_CLOSE, reason, delay)
  }

  private closedBy(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.socket) return
    this.detach()
    if (this.stopped) return
    if (FATAL[code]) return this.fatal(code, reason || FATAL[code])
    this.reconnect(code, reason || `closed ${code}`)
  }

  private fatal(code: number, reason: string): void {
    this.shutdown(1000)
    const info = { code, reason: FATAL[code] && reason !== FATAL[code] ? `${FATAL[code]} (${reason})` : reason }
    this.fail(new ConnectionError(`The Gateway closed: ${info.reason}`, undefined, code))
    this.emit('closed', info)
  }

  /** Capped exponential backoff with jitter; the first attempt after a working session goes almost at once. */
  private reconnect(code: number, reason: string, delay?: number): void {
    if (this.stopped) return
    const max = this.options.maxReconnectAttempts
    if (max !== undefined && this.attempts >= max) {
      return this.fatal(code, `gave up after ${this.attempts} reconnect attempts (last close ${code})`)
    }
    const base = this.options.backoff ?? 1000
    const cap = this.options.maxBackoff ?? 30_000
    const attempt = ++this.attempts
    const ceiling = Math.min(cap, base * 2 ** (attempt - 1))
    const wait = delay ?? Math.round(attempt === 1 ? Math.random() * base : ceiling / 2 + (Math.random() * ceiling) / 2)
    this.emit('reconnecting', { attempt, delay: wait, capped: ceiling >= cap, code, reason })
    clearTimeout(this.reconnectTimer)
    this.reconnectTimer = setTimeout(() => {
      if (!this.stopped) this.open()
    }, wait)
  }

  private raw(socket: WebSocket, frame: Frame): void {
    if (socket.readyState === 1) socket.send(JSON.stringify(frame))
  }

  private receive(socket: WebSocket, text: string): void {
    if (socket !== this.socket) return
    let frame: Frame
    try {
      frame = JSON.parse(text)
    } catch {
      return this.drop(socket, 'unreadable frame')
    }
    switch (frame.op) {
      case 10:
        return this.hello(socket, Number(frame.d?.heartbeat_interval) || 41_250)
      case 11:
        this.acked = true
        return
      case 1:
        return this.raw(socket, { op: 1, d: this.seq })
      case 7:
        return this.drop(socket, 'op 7', 0)
      case 9:
        // d: true: the session may still be resumed; false: identify anew, after Discord's 1-5 s (shorter here).
        if (frame.d !== true) this.forget()
        return this.drop(socket, 'op 9', 250 + Math.round(Math.random() * 750))
      case 0:
        return this.dispatch(socket, frame)
    }
  }

  private hello(socket: WebSocket, interval: number): void {
    const beat = (delay: number) => {
      this.beat = setTimeout(() => {
        // No ack since the last beat: the connection is a zombie; drop it and resume on a new one.
        if (!this.acked) return this.drop(socket, 'no heartbeat ack')
        this.acked = false
        this.raw(socket, { op: 1, d: this.seq })
        beat(interval)
      }, delay)
    }
    clearTimeout(this.beat)
    beat(Math.floor(interval * Math.random()))
    const token = this.client.authorization
    if (!token) return this.fatal(4004, 'no token: call client.setToken() before connecting')
    if (this.sessionIdValue !== undefined)
      this.raw(socket, { op: 6, d: { token, session_id: this.sessionIdValue, seq: this.seq } })
    else
      this.raw(socket, {
        op: 2,
        d: {
          token,
          intents: this.options.intents ?? 0,
          properties: {
            os: 'lobby-client',
            browser: 'lobby-client',
            device: 'lobby-client',
            ...this.options.properties,
          },
        },
      })
  }

  private dispatch(socket: WebSocket, frame: Frame): void {
    const s = typeof frame.s === 'number' ? frame.s : null
    if (frame.t === 'READY') {
      const ready = frame.d as Ready
      this.forget()
      this.sessionIdValue = ready.session_id
      this.resumeUrl = typeof ready.resume_gateway_url === 'string' ? ready.resume_gateway_url : undefined
      this.readyData = ready
      this.seq = s
      this.live = true
      this.attempts = 0
      const pending = this.pending
      this.pending = undefined
      if (pending) clearTimeout(pending.timer)
      this.emit('ready', ready)
      pending?.resolve(ready)
      this.flush()
      return
    }
    // A replayed event this session already had (never expected; a guard against doubles).
    if (s !== null && this.seq !== null && s <= this.seq) return
    if (s !== null) this.seq = s
    if (frame.t === 'RESUMED') {
      this.live = true
      this.attempts = 0
      this.emit('resumed')
      this.flush()
      return
    }
    if (!frame.t || socket !== this.socket) return
    this.emit('dispatch', frame.t, frame.d, s ?? 0)
    this.emit(frame.t, frame.d, s ?? 0)
  }

  /** Send what waits, as far as the window allows; the rest when the oldest send leaves the window. */
  private flush(): void {
    clearTimeout(this.flushTimer)
    const socket = this.socket
    if (!this.live || !socket || socket.readyState !== 1) return
    const limit = this.options.sendLimit ?? 110
    const now = Date.now()
    while (this.sentAt.length && now - this.sentAt[0] >= WINDOW_MS) this.sentAt.shift()
    while (this.waiting.length && this.sentAt.length < limit) {
      socket.send(this.waiting.shift()!)
      this.sentAt.push(now)
    }
    if (this.waiting.length) this.flushTimer = setTimeout(() => this.flush(), this.sentAt[0] + WINDOW_MS - now + 5)
  }
}
