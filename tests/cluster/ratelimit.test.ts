// The security limits in Redis (src/cluster/ratelimit.ts) on a real redis-server: parallel attempts through several
// connections (as from several nodes) pass exactly the allowance, refusals carry the wait until the window has room,
// the window slides, several slots count all or nothing, and a released attempt no longer counts.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { redisRateLimits } from '../../src/cluster/ratelimit'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { clock } from '../../src/core/clock'
import { ApiError } from '../../src/core/errors'
import { type RedisServer, startRedis } from './redis'

let server: RedisServer
let nodes: Redis[]
let limits: ReturnType<typeof redisRateLimits>[]

beforeAll(async () => {
  server = await startRedis()
  nodes = [0, 1, 2].map((n) => openRedis(server.url, `node-${n}`))
  limits = nodes.map(redisRateLimits)
})
afterAll(() => {
  for (const node of nodes) node.disconnect()
  server?.stop()
})
beforeEach(async () => {
  await nodes[0].flushall()
})
afterEach(() => clock.reset())

const MINUTE = { limit: 5, windowMs: 60_000 }

/** The attempt's outcome: 'ok', or the 429's retry_after (seconds) and Retry-After header. */
async function attempt(run: () => Promise<unknown>): Promise<'ok' | { retryAfter: number; header: string }> {
  try {
    await run()
    return 'ok'
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 429) throw error
    return { retryAfter: error.extra!.retry_after as number, header: error.headers!['Retry-After'] }
  }
}

describe('reserve', () => {
  test('30 parallel attempts through 3 connections with limit 5: exactly 5 pass, the rest wait out the window', async () => {
    const began = clock.now()
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        attempt(() => limits[i % 3].reserve(['login', 'alice@example.com', MINUTE])),
      ),
    )
    const took = clock.now() - began
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(5)
    const refused = outcomes.filter((o) => o !== 'ok')
    expect(refused).toHaveLength(25)
    for (const { retryAfter, header } of refused) {
      // Room again when the first counted attempt leaves the window: 60 s after it, less the time since.
      expect(retryAfter).toBeLessThanOrEqual(60)
      expect(retryAfter).toBeGreaterThanOrEqual(60 - took / 1000 - 0.001)
      expect(header).toBe('60')
    }
    // Another subject is counted apart.
    expect(await attempt(() => limits[0].reserve(['login', 'bob@example.com', MINUTE]))).toBe('ok')
  })

  test('the window slides: retry_after is the wait until the oldest attempt in it leaves', async () => {
    const slot = ['mfa', 'user-1', { limit: 2, windowMs: 60_000 }] as const
    expect(await attempt(() => limits[0].reserve(slot))).toBe('ok')
    clock.advance(20_000)
    expect(await attempt(() => limits[1].reserve(slot))).toBe('ok')
    const refused = await attempt(() => limits[2].reserve(slot))
    expect(refused).not.toBe('ok')
    if (refused === 'ok') return
    expect(refused.retryAfter).toBeGreaterThan(39.9)
    expect(refused.retryAfter).toBeLessThanOrEqual(40)
    clock.advance(40_000) // the first attempt has left the window; the second is 40 s old
    expect(await attempt(() => limits[0].reserve(slot))).toBe('ok')
    const next = await attempt(() => limits[1].reserve(slot))
    expect(next === 'ok' ? 0 : next.retryAfter).toBeGreaterThan(19.9)
    expect(next === 'ok' ? 0 : next.retryAfter).toBeLessThanOrEqual(20)
  })

  test('several slots count the attempt in all of them or in none, and the longest wait is the answer', async () => {
    const perAccount = ['forgot-login', 'carol', { limit: 1, windowMs: 3_600_000 }] as const
    const perAddress = ['forgot-ip', '192.0.2.1', { limit: 3, windowMs: 60_000 }] as const
    expect(await attempt(() => limits[0].reserve(perAccount, perAddress))).toBe('ok')
    const refused = await attempt(() => limits[1].reserve(perAccount, perAddress))
    expect(refused === 'ok' ? 0 : refused.retryAfter).toBeGreaterThan(3599)
    // The refused attempt was not counted against the address: two more pass there, then it is full.
    expect(await attempt(() => limits[2].reserve(perAddress))).toBe('ok')
    expect(await attempt(() => limits[0].reserve(perAddress))).toBe('ok')
    expect(await attempt(() => limits[1].reserve(perAddress))).not.toBe('ok')
  })

  test('a released attempt no longer counts, and releasing twice takes back only one', async () => {
    const slot = ['login-account', 'dave', { limit: 2, windowMs: 60_000 }] as const
    const first = await limits[0].reserve(slot)
    await limits[1].reserve(slot)
    expect(await attempt(() => limits[2].reserve(slot))).not.toBe('ok')
    first.release()
    first.release()
    await until(async () => (await nodes[0].zcard('rl:login-account:dave')) === 1)
    expect(await attempt(() => limits[2].reserve(slot))).toBe('ok')
    expect(await attempt(() => limits[0].reserve(slot))).not.toBe('ok')
  })
})

test('tryConsume answers instead of throwing, and clear empties a subject', async () => {
  const limit = { limit: 1, windowMs: 60_000 }
  expect(await limits[0].tryConsume('verify-resend', 'erin', limit)).toBe(true)
  expect(await limits[1].tryConsume('verify-resend', 'erin', limit)).toBe(false)
  await limits[2].clear('verify-resend', 'erin')
  expect(await limits[0].tryConsume('verify-resend', 'erin', limit)).toBe(true)
  expect(await attempt(() => limits[1].consume('verify-resend', 'erin', limit))).not.toBe('ok')
})

async function until(check: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 5000; !(await check()); await Bun.sleep(5))
    if (Date.now() > deadline) throw new Error('timed out')
}
