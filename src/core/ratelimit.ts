// The security limits (login, codes, recovery, MFA): sliding windows keyed by bucket and subject (IP, account,
// phone...), counted in memory here, or in Redis when several nodes share them (cluster/ratelimit.ts, put in place by
// `useSharedLimits` at start): callers `await` each call either way, first, before any other await.
// Read clock.now() so tests can move time instead of sleeping.
// An attempt is counted in the same step as its check (reserve; in memory one synchronous step, in Redis one script),
// before the caller's next await: parallel requests cannot all pass a check that is counted only after the expensive
// work. Where only failures should count, the caller releases its reservation on success.
import { appState } from './app'
import { clock } from './clock'
import { ApiError, Errors } from './errors'
import { ipKey } from './ip-key'
import { countRateLimitRefusal } from './metrics'

export type Limit = { limit: number; windowMs: number }
export type Slot = readonly [bucket: string, subject: string, limit: Limit]
export type Reservation = { release(): void }

/** Where attempts are counted: this process (the default), or a store every node shares. */
export type SharedLimits = {
  reserve(...slots: Slot[]): Promise<Reservation>
  clear(bucket: string, subject: string): Promise<void>
}
/** What this module holds per App (core/app.ts). */
const newLimits = () => ({
  shared: undefined as SharedLimits | undefined,
  hits: new Map<string, number[]>(),
})
declare module './app' {
  interface AppState {
    limits: ReturnType<typeof newLimits>
  }
}
const held = appState('limits', newLimits)

/** Count every attempt in `limits` from now on (cluster mode), or in memory again (undefined). */
export function useSharedLimits(limits: SharedLimits | undefined): void {
  held().shared = limits
}

function recent(key: string, windowMs: number): number[] {
  const st = held()
  const now = clock.now()
  const list = (st.hits.get(key) ?? []).filter((t) => t > now - windowMs && t <= now)
  if (list.length) st.hits.set(key, list)
  else st.hits.delete(key)
  return list
}

/**
 * A slot counted per client address: the address's ipKey (IPv6 by its /64, IPv4-mapped as IPv4), narrowed to
 * `scope` (an account) when given. Every per-IP limit is made here; its bucket's name ends in `-ip`
 * (scripts/check-structure.ts fails a limit that counts a raw address).
 */
export function perIp(bucket: `${string}-ip`, ip: string, limit: Limit, scope?: string): Slot {
  const key = ipKey(ip)
  return [bucket, scope === undefined ? key : `${scope}|${key}`, limit]
}

/**
 * Count one attempt against every slot, or against none: throws 429 (retry_after = the longest wait) when any slot
 * is used up. `release()` takes the attempt back (e.g. a correct password where only failures count). In memory it
 * answers in the same synchronous step (no promise to wait for); shared, once the shared store has counted.
 */
export function reserve(...slots: Slot[]): Reservation | Promise<Reservation> {
  const st = held()
  if (st.shared) return st.shared.reserve(...slots)
  return reserveHere(slots)
}

function reserveHere(slots: Slot[]): Reservation {
  const st = held()
  const now = clock.now()
  let retryMs = 0
  let refusedBy = ''
  const lists = slots.map(([bucket, subject, { limit, windowMs }]) => {
    const list = recent(`${bucket}:${subject}`, windowMs)
    if (list.length >= limit) {
      retryMs = Math.max(retryMs, list[0] + windowMs - now, 1)
      refusedBy ||= bucket
    }
    return list
  })
  if (retryMs > 0) {
    countRateLimitRefusal(refusedBy)
    throw Errors.rateLimited(retryMs / 1000)
  }
  slots.forEach(([bucket, subject], i) => {
    lists[i].push(now)
    st.hits.set(`${bucket}:${subject}`, lists[i])
  })
  let released = false
  return {
    release() {
      if (released) return
      released = true
      for (const [bucket, subject] of slots) {
        const list = st.hits.get(`${bucket}:${subject}`)
        const at = list?.lastIndexOf(now) ?? -1
        if (list && at >= 0) list.splice(at, 1)
      }
    },
  }
}

/** Throws 429 (with retry_after) when `subject` already used its allowance in `bucket`; otherwise counts one hit. */
export async function consume(bucket: string, subject: string, limit: Limit): Promise<void> {
  await reserve([bucket, subject, limit])
}

/** Whether `subject` still has room (counts the hit when it does). */
export async function tryConsume(bucket: string, subject: string, limit: Limit): Promise<boolean> {
  try {
    await reserve([bucket, subject, limit])
    return true
  } catch (error) {
    if (error instanceof ApiError && error.status === 429) return false
    throw error
  }
}

export async function clear(bucket: string, subject: string): Promise<void> {
  const st = held()
  if (st.shared) return st.shared.clear(bucket, subject)
  st.hits.delete(`${bucket}:${subject}`)
}

/** Drop expired entries now and then so the map does not grow without bound. */
export function sweep(maxWindowMs = 24 * 3600 * 1000): void {
  const st = held()
  const cutoff = clock.now() - maxWindowMs
  for (const [key, list] of st.hits) if (list.length === 0 || list[list.length - 1] <= cutoff) st.hits.delete(key)
}

/** Tests: forget every hit. */
export function resetRateLimits(): void {
  held().hits.clear()
}
