// The security limits of core/ratelimit.ts (login, codes, recovery, MFA) counted in Redis, so that N nodes allow what
// one does: the same slots, windows, refusal (429 with retry_after = the longest wait) and release. Each slot is a
// sorted set `rl:<bucket>:<subject>` of attempts scored by time; one script trims, checks every slot and counts the
// attempt in all of them or in none, so parallel attempts on any nodes cannot all pass one check. Times are the
// node's clock.now() (tests move it), as the in-memory limits read them. In cluster mode cluster/node.ts puts these in
// place of core/ratelimit.ts's in-memory counts.
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { ApiError, Errors } from '../core/errors'
import { log } from '../core/log'
import { countRateLimitRefusal } from '../core/metrics'
import type { Reservation, Slot } from '../core/ratelimit'
import { luaScript, type Redis } from './redis'

const keyOf = (bucket: string, subject: string) => `rl:${bucket}:${subject}`

// KEYS: one sorted set per slot. ARGV: now (ms), the attempt's member, then limit and window (ms) per slot.
// Returns 0 when counted, else the wait (ms, at least 1) until the fullest slot has room, and that slot's index.
// Every attempt after now - window counts, even one stamped later than now: attempts from several nodes arrive in
// any order, and a node's clock may run ahead of another's.
const RESERVE = luaScript(`
local now = tonumber(ARGV[1])
local wait, refused = 0, 0
for i, key in ipairs(KEYS) do
  local limit, window = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local since = string.format('%d', now - window)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', since)
  local count = redis.call('ZCOUNT', key, '(' .. since, '+inf')
  if count >= limit then
    -- room again when the attempt that is limit-th from the newest leaves the window
    local at = redis.call('ZRANGEBYSCORE', key, '(' .. since, '+inf', 'WITHSCORES', 'LIMIT', count - limit, 1)
    -- never more than a window: an attempt stamped by a node whose clock is ahead (or a moment later) than this one's
    local ms = math.min(math.max(tonumber(at[2]) + window - now, 1), window)
    if ms > wait then wait, refused = ms, i end
  end
end
if wait > 0 then return {wait, refused} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[1], ARGV[2])
  redis.call('PEXPIRE', key, ARGV[2 + 2 * i])
end
return {0, 0}
`)

/** What this module holds per App (core/app.ts). */
const newClusterLimits = () => ({
  attempts: 0,
})
declare module '../core/app' {
  interface AppState {
    clusterLimits: ReturnType<typeof newClusterLimits>
  }
}
const held = appState('clusterLimits', newClusterLimits)
/** A member no other attempt of any node has: this process's random prefix and a counter. */
const prefix = crypto.randomUUID()

/**
 * Redis away or hung (redis.ts: the command's timeout): the attempt cannot be counted, so it is not let through; the
 * client is told to retry (503) rather than given a 500.
 */
function unavailable(error: unknown): never {
  log.warn('security limits: Redis did not answer; the request is refused with 503', { error: String(error) })
  throw Errors.unavailable()
}

/** The limits of core/ratelimit.ts on one Redis connection. */
export function redisRateLimits(redis: Redis) {
  /**
   * Count one attempt against every slot, or against none: throws 429 (retry_after = the longest wait) when any slot
   * is used up. `release()` takes the attempt back (e.g. a correct password where only failures count).
   */
  async function reserve(...slots: Slot[]): Promise<Reservation> {
    const member = `${prefix}:${(held().attempts += 1)}`
    const keys = slots.map(([bucket, subject]) => keyOf(bucket, subject))
    const args = [clock.now(), member, ...slots.flatMap(([, , { limit, windowMs }]) => [limit, windowMs])]
    const [waitMs, refused] = (await RESERVE(redis, keys, args).catch(unavailable)) as [number, number]
    if (waitMs > 0) {
      countRateLimitRefusal(slots[refused - 1][0])
      throw Errors.rateLimited(waitMs / 1000)
    }
    let released = false
    return {
      release() {
        if (released) return
        released = true
        const batch = redis.pipeline()
        for (const key of keys) batch.zrem(key, member)
        void batch.exec().catch(() => {}) // lost with Redis away: the attempt then counts until its window ends
      },
    }
  }

  return {
    reserve,
    /** Throws 429 (with retry_after) when `subject` already used its allowance in `bucket`; otherwise counts one hit. */
    async consume(bucket: string, subject: string, limit: Slot[2]): Promise<void> {
      await reserve([bucket, subject, limit])
    },
    /** Whether `subject` still has room (counts the hit when it does). */
    async tryConsume(bucket: string, subject: string, limit: Slot[2]): Promise<boolean> {
      try {
        await reserve([bucket, subject, limit])
        return true
      } catch (error) {
        if (error instanceof ApiError && error.status === 429) return false
        throw error
      }
    },
    async clear(bucket: string, subject: string): Promise<void> {
      // A forgiveness lost with Redis away: the attempts then count until their window ends (as release()'s).
      await redis.del(keyOf(bucket, subject)).catch(() => {})
    },
  }
}
