// A Gateway socket's own state (what Bun keeps with it), the service's open sockets, and what every part of the
// Gateway does to a socket: send it a frame, close it.
import { config } from '../config'
import { appState } from '../core/app'
import { clock } from '../core/clock'
import type { IpKey } from '../core/ip-key'
import type { GatewaySession, Socket } from './sessions'
import type { ZlibStream } from './zlib-stream'

/**
 * What Bun keeps with each Gateway socket (its `data`): what the upgrade read and the connection's state, one object
 * (server.ts's SocketData adds the open, message and close that Elysia's app-wide WebSocket handler calls).
 */
export class Connection {
  session?: GatewaySession = undefined
  /** performance.now() by which the next heartbeat must arrive (the sweep closes the socket after it). */
  beatBy = heartbeatDeadline()
  /** Closing or closed: nothing more is handled. */
  closing = false
  /** Closed by this node going away (several nodes): the session stays resumable, on any node. */
  leaving = false
  identifying = false
  /** clock.now() at the upgrade: Identify or Resume must come within IDENTIFY_TIMEOUT_MS. */
  readonly openedAt = clock.now()
  /** Frames received in the current window (FRAME_WINDOW_MS from windowStart). */
  frames = 0
  windowStart = this.openedAt
  /** `?compress=zlib-stream`: every frame to this socket goes through its own zlib context. */
  zlib?: ZlibStream = undefined
  /** While a message is being handled (handlers await the stores): the ones that came since, handled next in order. */
  backlog?: unknown[] = undefined

  constructor(
    readonly version: number,
    /** The client's address (IPv6 by its /64) while the socket is unidentified and counts against its IP's limit. */
    public pendingIp: IpKey | undefined,
    /** Asked for `?compress=zlib-stream`. */
    readonly compress: boolean,
    /** Asked for an encoding other than JSON (closed at open). */
    readonly badEncoding: boolean,
  ) {}
}

export const connectionOf = (ws: Socket) => ws.data as Connection

/** The service's open Gateway sockets (core/app.ts): server.ts adds and removes them, the sweep visits them. */
const newGatewaySockets = () => new Set<Socket>()
declare module '../core/app' {
  interface AppState {
    gatewaySockets: ReturnType<typeof newGatewaySockets>
  }
}
export const openSockets = appState('gatewaySockets', newGatewaySockets)

export function gatewayUrl(): string {
  return `${config().baseUrl.replace(/^http/, 'ws')}/gateway`
}

/** A frame to one socket, deflated when the socket asked for zlib-stream. */
export function send(ws: Socket, payload: string): void {
  const zlib = connectionOf(ws).zlib
  if (zlib) zlib.send(payload)
  else ws.send(payload)
}

/** Close a socket; a compressed one first gets the frames already queued for it (e.g. AUTH_SESSION_CHANGE). */
export function close(ws: Socket, code: number, reason: string): void {
  const conn = connectionOf(ws)
  conn.closing = true
  if (conn.zlib) conn.zlib.whenFlushed(() => ws.close(code, reason))
  else ws.close(code, reason)
}

/**
 * The next heartbeat is due within an interval and a half (the first beat is jittered over a whole interval; half an
 * interval more for latency). Real time, not clock.now() (tests move that). The sweep closes late sockets: one
 * deadline per socket rather than a timer, whose object and closure cost more than the rest of the connection.
 */
export function heartbeatDeadline(): number {
  return performance.now() + config().gatewayHeartbeatMs * 1.5
}
