// Discord snowflakes: 42 bits of ms since 2015-01-01, 5 worker bits, 5 process bits, 12-bit increment.
import { clock } from './clock'

const DISCORD_EPOCH = 1420070400000n

/** The worker and process bits: worker 0 and the pid's low bits for one server; a leased node id with several. */
const OWN_BITS = BigInt(process.pid & 0x1f)
let nodeBits = OWN_BITS

/**
 * Several nodes: this node's id (0–1023, leased in Redis: cluster/leases.ts) fills the worker and process bits, so no
 * two machines mint the same id (every container may be pid 1). undefined: back to one server's bits.
 */
export function useNodeId(id: number | undefined): void {
  if (id !== undefined && (!Number.isInteger(id) || id < 0 || id > 1023)) throw new Error(`node id ${id} is not 0–1023`)
  nodeBits = id === undefined ? OWN_BITS : BigInt(id)
}

let lastMs = 0n
let increment = 0n

/** A new snowflake; strictly increasing within this process. */
export function snowflake(): string {
  let ms = BigInt(clock.now()) - DISCORD_EPOCH
  if (ms < lastMs) ms = lastMs // never go backwards, even if the clock is moved back in tests
  if (ms === lastMs) {
    increment = (increment + 1n) & 0xfffn
    // 4096 ids in one ms: borrow the next ms rather than repeat an id.
    if (increment === 0n) ms = lastMs + 1n
  } else {
    increment = 0n
  }
  lastMs = ms
  return ((ms << 22n) | (nodeBits << 12n) | increment).toString()
}

/** Milliseconds since the Unix epoch encoded in a snowflake. */
export function snowflakeTime(id: string | bigint): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH)
}

/** The smallest snowflake at a given time (for pagination by time). */
export function snowflakeAt(ms: number): string {
  return ((BigInt(ms) - DISCORD_EPOCH) << 22n).toString()
}

/**
 * The largest id: 2^63 - 1, the top of PostgreSQL's bigint and SQLite's INTEGER, which order ids by number in pages.
 * No id is minted past it (42 bits of ms last until 2154).
 */
export const MAX_SNOWFLAKE = '9223372036854775807'

/**
 * A client's id: 1-20 digits, at most MAX_SNOWFLAKE. One rule for every id a client sends (path, query, body,
 * Gateway), so none that reaches SQL can overflow a cast to bigint; past it is "not snowflake", as Discord says.
 */
export function isSnowflake(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) return false
  // Up to 18 digits always fits; only longer strings need the comparison (BigInt per call cost ~2 %).
  return value.length < 19 || BigInt(value) <= BigInt(MAX_SNOWFLAKE)
}

/** Any 64-bit id (1-20 digits, below 2^64): what a paging cursor or an operator's experiment definition may name. */
export function isId64(value: string): boolean {
  return /^\d{1,20}$/.test(value) && BigInt(value) < 2n ** 64n
}
