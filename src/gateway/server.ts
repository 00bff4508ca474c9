// The Discord Gateway at /gateway: the upgrade and each socket's life (Hello, heartbeats, its messages in order, its
// close), and the service's Gateway started and drained. identify.ts makes a socket a session (Identify, Resume),
// dispatch.ts is the EventBus the domains publish to and delivers its events, limits.ts bounds sockets and frames.
import type { Server } from 'bun'
import { config } from '../config'
import { clock } from '../core/clock'
import { appState } from '../core/app'
import { Errors } from '../core/errors'
import { ipKey } from '../core/ip-key'
import { log } from '../core/log'
import { beginTrace, errorResponse, finish } from '../http/basics'
import { clientIp } from '../http/client-ip'
import { wiring } from './bus'
import { Connection, close, connectionOf, heartbeatDeadline, openSockets, send } from './connection'
import { connectionView, endSession, gatewayLog, publishThrough } from './dispatch'
import { identify, resume } from './identify'
import { admitPending, overFrameLimit, settlePending, sweepExpired } from './limits'
import { ACCEPTED_NOOP_OPS, Close, MAX_INBOUND_BYTES, Op, QOS_HEARTBEAT, frame } from './protocol'
import { currentSeq, replayStats, setReplayLimit } from './replay'
import { allSessions, detach, type Socket } from './sessions'
import { ZlibStream } from './zlib-stream'

/**
 * Bun's `data` of a Gateway socket: its Connection, with the open, message and close that Elysia's app-wide WebSocket
 * handler calls (the class's, shared by every socket).
 */
class SocketData extends Connection {
  open(ws: Socket): void {
    onOpen(ws, this)
  }

  message(ws: Socket, message: string | Buffer): void {
    onRawMessage(ws, this, message)
  }

  close(ws: Socket, code: number): void {
    onClose(ws, this, code)
  }
}

/** What this module holds per service (core/app.ts). */
const newGatewaySweeper = () => ({ sweeper: undefined as Timer | undefined })
declare module '../core/app' {
  interface AppState {
    gatewaySweeper: ReturnType<typeof newGatewaySweeper>
  }
}
const gw = appState('gatewaySweeper', newGatewaySweeper)

/** The Bun server to publish through, set once the app listens; the sweep starts. */
export function attachGateway(bunServer: Server<unknown>): void {
  const st = gw()
  publishThrough(bunServer)
  setReplayLimit(config().gatewayReplayBytes)
  st.sweeper ??= setInterval(sweepExpired, 1000)
  st.sweeper.unref?.()
}

async function onMessage(ws: Socket, conn: Connection, message: unknown): Promise<void> {
  if (conn.closing) return
  if (
    typeof message !== 'object' ||
    message === null ||
    Array.isArray(message) ||
    Buffer.isBuffer(message) ||
    message instanceof Uint8Array
  ) {
    return close(ws, Close.DecodeError, 'Decode error')
  }
  if (JSON.stringify(message).length > MAX_INBOUND_BYTES) return close(ws, Close.DecodeError, 'Payload too large')
  const { op, d } = message as { op?: unknown; d?: unknown }
  if (typeof op !== 'number') return close(ws, Close.DecodeError, 'Decode error')
  if (op === Op.Heartbeat || op === QOS_HEARTBEAT) return beat(ws, conn)
  if (op === Op.Identify || op === Op.Resume) {
    if (conn.session || conn.identifying) return close(ws, Close.AlreadyAuthenticated, 'Already authenticated')
    conn.identifying = true
    try {
      return await (op === Op.Identify ? identify(ws, conn, d) : resume(ws, conn, d))
    } finally {
      conn.identifying = false
    }
  }
  const handler = wiring().opHandlers.get(op)
  if (!handler && !ACCEPTED_NOOP_OPS.has(op)) return close(ws, Close.UnknownOpcode, 'Unknown opcode')
  if (!conn.session) return close(ws, Close.NotAuthenticated, 'Not authenticated')
  if (handler) await handler(connectionView(conn.session), d)
}

function onClose(ws: Socket, conn: Connection, code: number): void {
  if (!openSockets().delete(ws)) return
  conn.closing = true
  settlePending(conn)
  conn.zlib?.end()
  const session = conn.session
  if (!session || session.ws !== ws) return
  detach(session)
  // 1000/1001 from the client end the session; anything else leaves it resumable for a while.
  if ((code === 1000 || code === 1001) && !conn.leaving) endSession(session)
  else session.resumableUntil = clock.now() + config().gatewayResumeWindowMs
}

/**
 * On shutdown: every socket first gets op 7 Reconnect (Discord's "reconnect and resume", which libraries act on at
 * once), then the close 1001. A client resumes where a node still knows its session, else it identifies again.
 */
export async function closeAllGatewaySockets(): Promise<void> {
  const st = gw()
  await drainGatewaySockets()
  clearInterval(st.sweeper)
  st.sweeper = undefined
}

/**
 * Several nodes: how long a node going away lets the sockets it sent op 7 close themselves (libraries close at once,
 * then resume) before it closes them. Closed by us first, a library may take it for a second disconnect: Discordeno
 * (its shard's handleClose) starts a second Resume beside the one op 7 started, and after the two, identifies anew
 * (a new session: what it missed is lost).
 */
const LEAVING_GRACE_MS = 2000

/**
 * Op 7 (Reconnect) to every identified socket, then close every socket. One server: 1001 at once, its sessions end
 * with it. Several nodes: 4000, once the client had LEAVING_GRACE_MS to close it itself; libraries answer either with
 * a Resume (a 1000 or 1001 makes them identify anew), and the sessions stay resumable on any node (their records
 * kept): an upgrade drops no session. Resolves once every socket is closed or being closed.
 */
export async function drainGatewaySockets(): Promise<void> {
  const sockets = openSockets()
  const reconnect = frame(Op.Reconnect, null)
  const leaving = gatewayLog() !== undefined
  const told: Socket[] = []
  for (const ws of [...sockets]) {
    const conn = connectionOf(ws)
    const identified = conn.session !== undefined && !conn.closing
    if (identified) send(ws, reconnect)
    conn.leaving = leaving
    if (!leaving) close(ws, 1001, 'Server shutting down')
    else if (identified) told.push(ws)
    else close(ws, Close.UnknownError, 'Server going away: resume')
  }
  const open = () => told.filter((ws) => sockets.has(ws) && !connectionOf(ws).closing)
  for (const by = performance.now() + LEAVING_GRACE_MS; open().length > 0 && performance.now() < by; )
    await Bun.sleep(5)
  for (const ws of open()) close(ws, Close.UnknownError, 'Server going away: resume')
}

function onOpen(raw: Socket, conn: Connection): void {
  // Discord's transport compression; other values (zstd-stream) are not offered: those clients get plain text frames.
  if (conn.compress) conn.zlib = new ZlibStream((bytes) => raw.send(bytes))
  openSockets().add(raw)
  if (!admitPending(conn)) return close(raw, Close.RateLimited, 'Too many unidentified connections')
  if (conn.version !== 9 && conn.version !== 10) return close(raw, Close.InvalidApiVersion, 'Invalid API version')
  if (conn.badEncoding) return close(raw, Close.DecodeError, 'Only JSON encoding is supported')
  send(raw, frame(Op.Hello, { heartbeat_interval: config().gatewayHeartbeatMs, _trace: ['lobby-server'] }))
}

/** A text frame is JSON; anything that is not (or a binary frame) is answered by onMessage's decode error. */
function decodeFrame(message: string | Buffer): unknown {
  if (typeof message !== 'string') return message
  try {
    return JSON.parse(message)
  } catch {
    return message
  }
}

/**
 * A socket's messages are handled one after another, in the order they came: a handler may await the stores, and
 * the next message waits for it. Frames are counted as they come (the rate limit bounds what can wait).
 */
function onRawMessage(raw: Socket, conn: Connection, message: string | Buffer): void {
  if (conn.closing) return
  if (overFrameLimit(conn)) return close(raw, Close.RateLimited, 'You are being rate limited.')
  const decoded = decodeFrame(message)
  // A heartbeat is answered as it comes, not behind the messages before it: it says the socket is alive, and a handler
  // that takes seconds (a call's first join on a busy machine) must not make a live client look dead (4009) or miss
  // its ack (a client then drops the connection and, with it, e.g. its lobby call).
  if (typeof message === 'string' && message.length <= MAX_INBOUND_BYTES && isHeartbeat(decoded)) return beat(raw, conn)
  if (conn.backlog) {
    conn.backlog.push(decoded)
    return
  }
  conn.backlog = []
  void handleInOrder(raw, conn, decoded)
}

function isHeartbeat(frame: unknown): boolean {
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) return false
  const { op } = frame as { op?: unknown }
  return op === Op.Heartbeat || op === QOS_HEARTBEAT
}

function beat(ws: Socket, conn: Connection): void {
  conn.beatBy = heartbeatDeadline()
  send(ws, frame(Op.HeartbeatAck, null))
}

async function handleInOrder(raw: Socket, conn: Connection, first: unknown): Promise<void> {
  // A decoded frame is never undefined (JSON has no such value): undefined is the end of the backlog.
  for (let message: unknown = first; message !== undefined; message = conn.backlog?.shift()) {
    try {
      await onMessage(raw, conn, message)
    } catch (error) {
      log.error('gateway message failed', { error: String(error) })
      close(raw, Close.UnknownError, 'Unknown error')
    }
  }
  conn.backlog = undefined
}

/**
 * GET /gateway, answered by Bun's router (app.ts): the upgrade, logged as a request. Elysia's WebSocket route kept its
 * whole request context and a set of closures with every socket (~13 KB each, measured); a Gateway socket keeps only
 * the few values it needs. Elysia's app-wide WebSocket handler calls the data's open, message and close.
 */
export function gatewayUpgrade(request: Request, bunServer: Server<unknown>): Response | undefined {
  const trace = beginTrace(request, bunServer)
  const query = new URL(request.url).searchParams
  const encoding = query.get('encoding')
  const data = new SocketData(
    Number(query.get('v') ?? 9),
    ipKey(clientIp(request, bunServer)),
    query.get('compress') === 'zlib-stream',
    !!encoding && encoding !== 'json',
  )
  if (bunServer.upgrade(request, { data, headers: { 'x-request-id': trace.id } })) {
    finish('GET', '/gateway', 101, trace)
    return undefined
  }
  finish('GET', '/gateway', 400, trace)
  return errorResponse(Errors.notUpgraded(), { 'x-request-id': trace.id })
}

/**
 * GET /gateway/: the same upgrade. Discord's Gateway answers at `/?v=10`, and Oceanic and Eris append `/` to the URL of
 * GET /gateway/bot (`/gateway/?v=10`). Bun's router is given `/gateway/*` (Elysia's listen drops a trailing slash from
 * a route's path, which would make it `/gateway`): only `/gateway/` itself upgrades, any longer path (`/gateway//`,
 * `/gateway/x`) goes on to `otherwise` (the app, which answers its 404).
 */
export function gatewaySlashUpgrade(
  otherwise: (request: Request) => Response | Promise<Response>,
): (request: Request, bunServer: Server<unknown>) => Response | Promise<Response> | undefined {
  return (request, bunServer) =>
    new URL(request.url).pathname === '/gateway/' ? gatewayUpgrade(request, bunServer) : otherwise(request)
}

/** Open sockets and live sessions (the /metrics gauges). */
export function gatewayStats() {
  const replay = replayStats()
  return {
    connections: openSockets().size,
    sessions: allSessions().size,
    seq: currentSeq(),
    replayEntries: replay.entries,
    replayBytes: replay.bytes,
  }
}
