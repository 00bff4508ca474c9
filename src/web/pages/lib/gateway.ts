// The Gateway from the pages: a one-shot identify that reads READY (the hash of this browser's auth session, which
// the REST session list does not mark), and a long-lived connection for the lobby page (dispatches, voice signalling).
import { session } from './api'

export function currentSessionHash(timeoutMs = 5000): Promise<string | null> {
  const token = session.token()
  if (!token) return Promise.resolve(null)
  return new Promise((resolve) => {
    const socket = new WebSocket(
      `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway?v=9&encoding=json`,
    )
    const done = (hash: string | null) => {
      clearTimeout(timer)
      resolve(hash)
      if (socket.readyState <= WebSocket.OPEN) socket.close(1000)
    }
    const timer = setTimeout(() => done(null), timeoutMs)
    socket.addEventListener('message', (event) => {
      let frame: { op?: number; t?: string; d?: any }
      try {
        frame = JSON.parse(String(event.data))
      } catch {
        return done(null)
      }
      if (frame.op === 10)
        socket.send(
          JSON.stringify({ op: 2, d: { token, properties: { os: 'web', browser: 'web', device: '' }, intents: 0 } }),
        )
      else if (frame.op === 0 && frame.t === 'READY')
        done(typeof frame.d?.auth_session_id_hash === 'string' ? frame.d.auth_session_id_hash : null)
    })
    socket.addEventListener('error', () => done(null))
    socket.addEventListener('close', () => done(null))
  })
}

export type GatewayHandlers = {
  /** Every dispatch (op 0) after READY, and those a resume replays. */
  onDispatch: (type: string, data: any) => void
  /** READY: a new Gateway session (after a lost one too: whatever the page held on the old one is gone). */
  onReady?: (data: any) => void
  /** RESUMED: the same session on a new socket, with the dispatches missed meanwhile replayed before it. */
  onResumed?: () => void
  /** The connection dropped; it reconnects and resumes by itself unless `willRetry` is false (a refused token). */
  onDown?: (willRetry: boolean) => void
}

const RETRY_MS = [1000, 2000, 5000, 10_000, 30_000]
/** Frames kept for a resume while the socket is down (a call's answer and candidates); more are refused. */
const MAX_WAITING = 100

/**
 * A long-lived Gateway connection for a page: identify with the session token, heartbeat as Hello says (a missed
 * ack means a dead socket), and reconnect with backoff, resuming the session (op 6): a socket that dropped, e.g. on a
 * server too busy to answer a heartbeat in time, costs the page nothing, its lobby call included. Only a session the
 * server no longer has (op 9) means identifying again (a new session: the page starts over from READY). A refused
 * token (4004) stops it.
 */
export class GatewayConnection {
  private socket?: WebSocket
  private beat?: ReturnType<typeof setTimeout>
  private seq: number | null = null
  private acked = true
  private attempts = 0
  private stopped = false
  /** The session to resume, from READY; cleared when the server no longer has it. */
  private sessionId?: string
  /** READY or RESUMED came on the current socket: frames go out. */
  private live = false
  /** Frames sent while the session waits for its resume, sent after RESUMED. */
  private waiting: string[] = []

  constructor(
    private readonly token: string,
    private readonly handlers: GatewayHandlers,
  ) {}

  /** The session is up on an open socket. */
  get open(): boolean {
    return this.live && this.socket?.readyState === WebSocket.OPEN
  }

  start(): void {
    this.stopped = false
    this.connect()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.beat)
    this.socket?.close(1000)
  }

  /**
   * Send an op; while the session is between sockets it waits for the resume. False when there is no session to
   * send it on (the caller decides what that means).
   */
  send(op: number, d: unknown): boolean {
    const text = JSON.stringify({ op, d })
    if (this.open) {
      this.socket!.send(text)
      return true
    }
    if (this.sessionId === undefined || this.waiting.length >= MAX_WAITING) return false
    this.waiting.push(text)
    return true
  }

  private connect(): void {
    const socket = new WebSocket(
      `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway?v=9&encoding=json`,
    )
    this.socket = socket
    this.live = false
    socket.addEventListener('message', (event) => this.receive(socket, event))
    socket.addEventListener('close', (event) => this.closed(socket, event.code))
  }

  /** The session is gone: what waited for it goes with it, and the next socket identifies. */
  private forget(): void {
    this.sessionId = undefined
    this.seq = null
    this.waiting = []
  }

  private receive(socket: WebSocket, event: MessageEvent): void {
    if (socket !== this.socket) return
    let frame: { op?: number; t?: string; s?: number | null; d?: any }
    try {
      frame = JSON.parse(String(event.data))
    } catch {
      return socket.close(4000)
    }
    if (typeof frame.s === 'number') this.seq = frame.s
    switch (frame.op) {
      case 10: {
        const interval = Number(frame.d?.heartbeat_interval) || 41_250
        this.acked = true
        const beat = (delay: number) =>
          (this.beat = setTimeout(() => {
            // No ack since the last beat: the connection is a zombie; close it and start again (resuming).
            if (!this.acked) return socket.close(4000)
            this.acked = false
            socket.send(JSON.stringify({ op: 1, d: this.seq }))
            beat(interval)
          }, delay))
        clearTimeout(this.beat)
        beat(Math.floor(interval * Math.random()))
        socket.send(
          JSON.stringify(
            this.sessionId !== undefined
              ? { op: 6, d: { token: this.token, session_id: this.sessionId, seq: this.seq } }
              : { op: 2, d: { token: this.token, properties: { os: 'web', browser: 'web', device: '' }, intents: 0 } },
          ),
        )
        return
      }
      case 11:
        this.acked = true
        return
      case 1:
        socket.send(JSON.stringify({ op: 1, d: this.seq }))
        return
      case 9: // Invalid session: identify again on a new socket
        this.forget()
        return socket.close(4000)
      case 7: // Reconnect (and resume)
        return socket.close(4000)
      case 0:
        if (frame.t === 'READY') {
          this.attempts = 0
          this.forget()
          this.sessionId = typeof frame.d?.session_id === 'string' ? frame.d.session_id : undefined
          this.seq = typeof frame.s === 'number' ? frame.s : null
          this.live = true
          this.handlers.onReady?.(frame.d)
        } else if (frame.t === 'RESUMED') {
          this.attempts = 0
          this.live = true
          for (const text of this.waiting.splice(0)) socket.send(text)
          this.handlers.onResumed?.()
        } else if (frame.t) this.handlers.onDispatch(frame.t, frame.d)
    }
  }

  private closed(socket: WebSocket, code: number): void {
    if (socket !== this.socket) return
    clearTimeout(this.beat)
    this.socket = undefined
    this.live = false
    if (this.stopped) return
    const retry = code !== 4004
    if (!retry) this.forget()
    this.handlers.onDown?.(retry)
    if (!retry) return
    setTimeout(() => this.stopped || this.connect(), RETRY_MS[Math.min(this.attempts++, RETRY_MS.length - 1)])
  }
}
