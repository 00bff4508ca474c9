// Discord Gateway opcodes, close codes and frames (WIRE.md §2).

export const Op = {
  Dispatch: 0,
  Heartbeat: 1,
  Identify: 2,
  PresenceUpdate: 3,
  VoiceStateUpdate: 4,
  Resume: 6,
  Reconnect: 7,
  RequestGuildMembers: 8,
  InvalidSession: 9,
  Hello: 10,
  HeartbeatAck: 11,
} as const

/**
 * Client opcodes Discord defines that we accept without acting on them (closing would break real clients): voice state and ping, call connect, guild subscriptions, streams, forum unreads, remote command,
 * deleted entity IDs, soundboard, speed tests, last messages, member search, channel statuses and info, channel
 * resync and member count, time spent, lobby voice server ping. Discord's list: 1-6, 8, 13, 14, 17-22, 28-43
 * (12, 15, 16 and 23-27 are retired; 0, 7, 9, 10, 11 are server-sent). Anything else closes 4001, except the ops a
 * domain registered (3 for presence; 8 for guild members; 17 and our own 100, 101 for lobby voice).
 */
export const ACCEPTED_NOOP_OPS = new Set([
  4, 5, 13, 14, 18, 19, 20, 21, 22, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 41, 42, 43,
])
/** QoS heartbeat (op 40) counts as a heartbeat. */
export const QOS_HEARTBEAT = 40

export const Close = {
  UnknownError: 4000,
  UnknownOpcode: 4001,
  DecodeError: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  InvalidSeq: 4007,
  RateLimited: 4008,
  SessionTimedOut: 4009,
  InvalidShard: 4010,
  InvalidApiVersion: 4012,
} as const

/**
 * Identify's `shard: [shard_id, num_shards]`, which READY gives back (discord.py's AutoShardedClient reads it there);
 * undefined when not sent, false when it is not two integers with 0 <= shard_id < num_shards (Discord closes 4010).
 */
export function identifyShard(value: unknown): [number, number] | undefined | false {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || value.length !== 2) return false
  const [id, count] = value
  return Number.isSafeInteger(id) && Number.isSafeInteger(count) && id >= 0 && id < count ? [id, count] : false
}

export const MAX_INBOUND_BYTES = 15 * 1024
/** The largest WebSocket frame Bun accepts on any socket of the server (set app-wide in app.ts). */
export const WS_MAX_FRAME_BYTES = 20 * 1024

/** A socket must Identify or Resume this soon after Hello, or it is closed with 4003. */
export const IDENTIFY_TIMEOUT_MS = 20_000
/** Unidentified sockets one IP may hold at once; more are closed with 4008. */
export const MAX_PENDING_PER_IP = 32
export const FRAME_WINDOW_MS = 60_000

/**
 * Frames a socket may send per minute before it is closed with 4008: Discord's 120, plus the heartbeats the announced
 * interval asks for (two per interval, for jitter), which matters only when the interval is short (tests).
 */
export function framesPerWindow(heartbeatMs: number): number {
  return 120 + Math.ceil((2 * FRAME_WINDOW_MS) / heartbeatMs)
}

/** A payload already serialized: sent to many sessions one by one, it is made into JSON once. */
export class Serialized {
  constructor(readonly json: string) {}
}

export function frame(op: number, d: unknown, s: number | null = null, t: string | null = null): string {
  if (d instanceof Serialized) return `{"op":${op},"d":${d.json},"s":${s},"t":${JSON.stringify(t)}}`
  return JSON.stringify({ op, d, s, t })
}
