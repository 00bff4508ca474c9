// In-memory sliding-window limits keyed by bucket and subject (IP, account, phone...).
// Read clock.now() so tests can move time instead of sleeping.
import { clock } from './clock'
import { Errors } from './errors'

export type Limit = { limit: number; windowMs: number }

const hits = new Map<string, number[]>()

function recent(key: string, windowMs: number): number[] {
  const now = clock.now()
  const list = (hits.get(key) ?? []).filter((t) => t > now - windowMs && t <= now)
  if (list.length) hits.set(key, list)
  else hits.delete(key)
  return list
}

/** Throws 429 (with retry_after) when `subject` already used its allowance in `bucket`; otherwise counts one hit. */
export function consume(bucket: string, subject: string, { limit, windowMs }: Limit): void {
  const key = `${bucket}:${subject}`
  const list = recent(key, windowMs)
  if (list.length >= limit) {
    const retryMs = list[0] + windowMs - clock.now()
    throw Errors.rateLimited(Math.max(retryMs, 1) / 1000)
  }
  list.push(clock.now())
  hits.set(key, list)
}

/** Throws 429 without counting (check before expensive work, count only failures with `record`). */
export function check(bucket: string, subject: string, { limit, windowMs }: Limit): void {
  const list = recent(`${bucket}:${subject}`, windowMs)
  if (list.length >= limit) throw Errors.rateLimited(Math.max(list[0] + windowMs - clock.now(), 1) / 1000)
}

/** Count one hit without checking. */
export function record(bucket: string, subject: string): void {
  const key = `${bucket}:${subject}`
  const list = hits.get(key) ?? []
  list.push(clock.now())
  hits.set(key, list)
}

/** Whether `subject` still has room (counts the hit when it does). */
export function tryConsume(bucket: string, subject: string, limit: Limit): boolean {
  try {
    consume(bucket, subject, limit)
    return true
  } catch {
    return false
  }
}

export function clear(bucket: string, subject: string): void {
  hits.delete(`${bucket}:${subject}`)
}

/** Drop expired entries now and then so the map does not grow without bound. */
export function sweep(maxWindowMs = 24 * 3600 * 1000): void {
  const cutoff = clock.now() - maxWindowMs
  for (const [key, list] of hits) if (list[list.length - 1] <= cutoff) hits.delete(key)
}

/** Tests: forget every hit. */
export function resetRateLimits(): void {
  hits.clear()
}
