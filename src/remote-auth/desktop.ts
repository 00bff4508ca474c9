// The desktop side of remote (QR) login, Discord's remote-auth gateway v2 (WIRE.md §3): flat {op, ...} JSON frames.
//   server hello {heartbeat_interval, timeout_ms} → client init {encoded_public_key} → server nonce_proof
//   {encrypted_nonce} → client nonce_proof {nonce} | {proof} → server pending_remote_init {fingerprint}; later the
//   mobile endpoints push pending_ticket, then pending_login or cancel (and close 1000).
// Socket state lives here, in memory, bounded (per IP, in total) and swept by deadlines that read clock.now(); what a
// mobile request needs (key, client info, deadline, claim) is a database row (store.ts) from the proof on. With
// several nodes the mobile request may land on another node than the desktop's socket: the node holding the socket
// holds the place `remote-auth:<fingerprint>` (gateway/nodes.ts), and the frames for it are sent there.
import { appState } from '../core/app'
import { randomBytes } from 'node:crypto'
import type { ServerWebSocket } from 'bun'
import type { ClientInfo } from '../accounts/client-info'
import { config } from '../config'
import { clock } from '../core/clock'
import { ipKey, type IpKey } from '../core/ip-key'
import { log } from '../core/log'
import { type NodeMessageHandler, nodeRouting } from '../gateway/nodes'
import { encryptTo, fingerprintOf, parsePublicKey, proves, type DesktopKey } from './crypto'
import { HEARTBEAT_GRACE, MAX_FRAME_BYTES, MAX_SOCKETS, SWEEP_EVERY_MS, frameBudget } from './limits'
import { deleteAllDesktops, deleteDesktop, fingerprintInUse, insertDesktop, purgeExpired } from './store'

export type Socket = ServerWebSocket<unknown>

/** Close codes of the remote-auth gateway (README lists them). */
export const Close = {
  Normal: 1000,
  GoingAway: 1001,
  PolicyViolation: 1008,
  TryAgainLater: 1013,
  InvalidVersion: 4000,
  DecodeError: 4001,
  HandshakeFailure: 4002,
  Timeout: 4003,
} as const

const VERSION = '2'

type Desktop = {
  ws: Socket
  /** What the per-IP socket count keys this socket under (IPv6 by /64). */
  ipKey: IpKey
  client: ClientInfo
  /** hello + timeout_ms: the socket's end whatever happens */
  expiresAt: number
  /** init must arrive before this */
  initBy: number
  /** the next heartbeat must arrive before this */
  heartbeatBy: number
  /** frames the client may still send */
  framesLeft: number
  key?: DesktopKey
  nonce?: Buffer
  /** set once the proof passed and the row exists */
  fingerprint?: string
  closed: boolean
  /** The frame being handled (they await the stores): the next one waits for it. */
  handling: Promise<void>
}

/** What this module holds per App (core/app.ts). */
const newDesktops = () => ({
  desktops: new Map<Socket, Desktop>(),
  byFingerprint: new Map<string, Desktop>(),
  socketsByIp: new Map<IpKey, number>(),
  sweeper: undefined as Timer | undefined,
})
declare module '../core/app' {
  interface AppState {
    desktops: ReturnType<typeof newDesktops>
  }
}
const held = appState('desktops', newDesktops)

function send(d: Desktop, frame: Record<string, unknown>): void {
  d.ws.send(JSON.stringify(frame))
}

/** Forget a desktop: maps, IP count and its row (so its handshake token dies). Idempotent. */
async function forget(d: Desktop): Promise<void> {
  const st = held()
  if (!st.desktops.delete(d.ws)) return
  const left = (st.socketsByIp.get(d.ipKey) ?? 1) - 1
  if (left > 0) st.socketsByIp.set(d.ipKey, left)
  else st.socketsByIp.delete(d.ipKey)
  if (d.fingerprint && st.byFingerprint.get(d.fingerprint) === d) {
    st.byFingerprint.delete(d.fingerprint)
    try {
      await nodeRouting()?.release(placeOf(d.fingerprint))
      await deleteDesktop(d.fingerprint)
    } catch (error) {
      log.error('remote-auth desktop row delete failed', { error: String(error) })
    }
  }
}

async function close(d: Desktop, code: number, reason: string): Promise<void> {
  if (d.closed) return
  d.closed = true
  await forget(d)
  d.ws.close(code, reason)
}

/** A new socket: check the version and the limits, then hello. */
export function openDesktop(ws: Socket, version: string | undefined, client: ClientInfo, origin: string | null): void {
  const st = held()
  if (version !== VERSION) {
    ws.close(Close.InvalidVersion, 'Invalid version')
    return
  }
  const cfg = config()
  const key = ipKey(client.ip)
  const fromIp = st.socketsByIp.get(key) ?? 0
  if (fromIp >= cfg.remoteAuthSocketsPerIp || st.desktops.size >= MAX_SOCKETS) {
    log.warn('remote-auth socket refused', {
      ip: client.ip,
      reason: fromIp >= cfg.remoteAuthSocketsPerIp ? 'per-ip' : 'total',
    })
    ws.close(Close.TryAgainLater, 'Too many connections')
    return
  }
  const now = clock.now()
  const d: Desktop = {
    ws,
    ipKey: key,
    client,
    expiresAt: now + cfg.remoteAuthTimeoutMs,
    initBy: now + cfg.remoteAuthInitMs,
    heartbeatBy: now + cfg.remoteAuthHeartbeatMs * HEARTBEAT_GRACE,
    framesLeft: frameBudget(cfg.remoteAuthTimeoutMs, cfg.remoteAuthHeartbeatMs),
    closed: false,
    handling: Promise.resolve(),
  }
  st.desktops.set(ws, d)
  st.socketsByIp.set(key, fromIp + 1)
  // Origin is not required (desktop and test clients send none); it is logged.
  log.info('remote-auth socket opened', { ip: client.ip, origin: origin ?? '-' })
  send(d, { op: 'hello', heartbeat_interval: cfg.remoteAuthHeartbeatMs, timeout_ms: cfg.remoteAuthTimeoutMs })
}

function frameSize(message: unknown): number {
  if (typeof message === 'string') return Buffer.byteLength(message)
  try {
    return Buffer.byteLength(JSON.stringify(message) ?? '')
  } catch {
    return Infinity
  }
}

/** One client frame (already JSON-parsed by Elysia when it was JSON), handled after the ones before it, in order. */
export function onFrame(ws: Socket, message: unknown): Promise<void> {
  const d = held().desktops.get(ws)
  if (!d || d.closed) return Promise.resolve()
  if (--d.framesLeft < 0) return close(d, Close.PolicyViolation, 'Too many frames')
  const handled = d.handling.then(() => (d.closed ? undefined : handleFrame(d, message)))
  d.handling = handled.catch(() => undefined)
  return handled
}

async function handleFrame(d: Desktop, message: unknown): Promise<void> {
  if (frameSize(message) > MAX_FRAME_BYTES) return await close(d, Close.DecodeError, 'Frame too large')
  if (typeof message !== 'object' || message === null || Array.isArray(message) || message instanceof Uint8Array) {
    return await close(d, Close.DecodeError, 'Decode error')
  }
  const frame = message as Record<string, unknown>
  switch (frame.op) {
    case 'heartbeat':
      d.heartbeatBy = clock.now() + config().remoteAuthHeartbeatMs * HEARTBEAT_GRACE
      return send(d, { op: 'heartbeat_ack' })
    case 'init':
      return await init(d, frame)
    case 'nonce_proof':
      return await proof(d, frame)
    default:
      return await close(d, Close.DecodeError, typeof frame.op === 'string' ? 'Unknown op' : 'Decode error')
  }
}

async function init(d: Desktop, frame: Record<string, unknown>): Promise<void> {
  if (d.key) return await close(d, Close.HandshakeFailure, 'Already initialized')
  const key = parsePublicKey(frame.encoded_public_key)
  if (!key) return await close(d, Close.HandshakeFailure, 'Invalid public key')
  d.key = key
  d.nonce = randomBytes(32)
  send(d, { op: 'nonce_proof', encrypted_nonce: encryptTo(key.key, d.nonce) })
}

async function proof(d: Desktop, frame: Record<string, unknown>): Promise<void> {
  const st = held()
  if (!d.key || !d.nonce || d.fingerprint) return await close(d, Close.HandshakeFailure, 'Unexpected nonce proof')
  if (!proves(frame, d.nonce)) return await close(d, Close.HandshakeFailure, 'Invalid nonce proof')
  d.nonce = undefined
  const fingerprint = fingerprintOf(d.key.spki)
  const now = clock.now()
  // Only the holder of the private key passes the proof, so a taken fingerprint is that holder's second socket. Taken
  // here before the store is asked, so a second socket proving the same key meanwhile is refused too.
  if (st.byFingerprint.has(fingerprint)) return await close(d, Close.HandshakeFailure, 'Fingerprint in use')
  st.byFingerprint.set(fingerprint, d)
  const release = () => {
    if (st.byFingerprint.get(fingerprint) === d) st.byFingerprint.delete(fingerprint)
  }
  if (await fingerprintInUse(fingerprint, now)) {
    release()
    return await close(d, Close.HandshakeFailure, 'Fingerprint in use')
  }
  try {
    await insertDesktop({
      fingerprint,
      publicKey: d.key.encoded,
      ip: d.client.ip,
      clientOs: d.client.os,
      clientPlatform: d.client.platform,
      clientLocation: d.client.location,
      createdAt: now,
      expiresAt: d.expiresAt,
    })
  } catch (error) {
    release()
    throw error
  }
  // Several nodes: the mobile requests find the socket here from any node (the fingerprint is this socket's alone).
  await nodeRouting()?.place(placeOf(fingerprint), d.expiresAt - now)
  if (d.closed) {
    // The socket closed while its row was written: the row and the place go with it.
    release()
    await nodeRouting()?.release(placeOf(fingerprint))
    await deleteDesktop(fingerprint)
    return
  }
  d.fingerprint = fingerprint
  send(d, { op: 'pending_remote_init', fingerprint })
}

const PLACE_PREFIX = 'remote-auth:'
const placeOf = (fingerprint: string) => `${PLACE_PREFIX}${fingerprint}`

/** Several nodes: the desktop's node died (its socket with it): its row goes, as a closed socket's does. */
export async function desktopOrphaned(key: string): Promise<void> {
  await deleteDesktop(key.slice(PLACE_PREFIX.length))
}

/** Bun's close event (the client left, or we closed it). */
export async function onSocketClosed(ws: Socket): Promise<void> {
  const d = held().desktops.get(ws)
  if (d) {
    d.closed = true
    await forget(d)
  }
}

export type DesktopHandle = { send(frame: Record<string, unknown>): Promise<void>; close(): Promise<void> }

/**
 * The desktop a fingerprint names, if its socket is proven and open: here, or (several nodes) on the live node that
 * holds its place, which gets the frames and the close as messages, in order.
 */
export async function desktopFor(fingerprint: string): Promise<DesktopHandle | undefined> {
  const here = liveDesktop(fingerprint)
  const r = nodeRouting()
  if (here || !r) return here
  const node = await r.holder(placeOf(fingerprint))
  if (!node || node === r.self) return undefined
  return {
    send: (frame) => r.send(node, 'remote-auth', { fingerprint, frame }),
    close: () => r.send(node, 'remote-auth', { fingerprint, close: true }),
  }
}

/** Another node's frame (or close) for a desktop whose socket is here. */
export const desktopNodeMessage: NodeMessageHandler = async (m: {
  fingerprint: string
  frame?: Record<string, unknown>
  close?: true
}) => {
  const desktop = liveDesktop(m.fingerprint)
  if (m.frame) await desktop?.send(m.frame)
  if (m.close) await desktop?.close()
}

/** The desktop a fingerprint names, if its socket is here, proven and open. */
function liveDesktop(fingerprint: string): DesktopHandle | undefined {
  const d = held().byFingerprint.get(fingerprint)
  if (!d || d.closed || d.ws.readyState !== 1 || d.expiresAt <= clock.now()) return undefined
  return {
    send: async (frame) => send(d, frame),
    close: async () => await close(d, Close.Normal, 'Normal closure'),
  }
}

/** Close sockets past a deadline (lifetime, init, heartbeat) and delete expired rows. Tests call it after moving the clock. */
export async function sweepRemoteAuth(now = clock.now()): Promise<void> {
  for (const d of [...held().desktops.values()]) {
    if (now >= d.expiresAt) await close(d, Close.Timeout, 'Timed out')
    else if (!d.key && now >= d.initBy) await close(d, Close.Timeout, 'Init timed out')
    else if (now >= d.heartbeatBy) await close(d, Close.Timeout, 'Heartbeat timed out')
  }
  await purgeExpired(now)
}

/**
 * At start: rows of sockets from before a restart are zombies (not with several nodes: the others' desktops are live;
 * what a dead node left expires); then sweep every second.
 */
export async function startRemoteAuthGateway(): Promise<void> {
  const st = held()
  if (!config().redisUrl) {
    const stale = await deleteAllDesktops()
    if (stale) log.info('remote-auth stale st.desktops removed', { count: stale })
  }
  let sweeping = false
  st.sweeper ??= setInterval(() => {
    // One sweep at a time, even if one outlasts the interval (it waits for the write mutex).
    if (sweeping) return
    sweeping = true
    sweepRemoteAuth()
      .catch((error) => log.error('remote-auth sweep failed', { error: String(error) }))
      .finally(() => {
        sweeping = false
      })
  }, SWEEP_EVERY_MS)
  st.sweeper.unref?.()
}

/** On shutdown: close every socket with 1001 and stop sweeping. */
export async function stopRemoteAuthGateway(): Promise<void> {
  const st = held()
  for (const d of [...st.desktops.values()]) await close(d, Close.GoingAway, 'Server shutting down')
  clearInterval(st.sweeper)
  st.sweeper = undefined
}

export function remoteAuthStats() {
  const st = held()
  return { sockets: st.desktops.size, proven: st.byFingerprint.size, ips: st.socketsByIp.size }
}
