import { afterEach, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { isSnowflake, snowflake, snowflakeTime } from '../../src/core/snowflake'

afterEach(() => clock.reset())

test('snowflakes are unique and increasing under a burst of concurrent creation', async () => {
  const ids = await Promise.all(Array.from({ length: 20000 }, async () => snowflake()))
  expect(new Set(ids).size).toBe(ids.length)
  const big = ids.map(BigInt)
  for (let i = 1; i < big.length; i++) expect(big[i] > big[i - 1]).toBe(true)
})

test('the timestamp decodes to the creation time (Discord epoch)', () => {
  // Ids never go back in time; other test files may have moved the clock ahead, so step past their last id.
  clock.advance(Math.max(0, snowflakeTime(snowflake()) - clock.now()) + 1000)
  const before = clock.now()
  const id = snowflake()
  const after = clock.now()
  expect(isSnowflake(id)).toBe(true)
  const t = snowflakeTime(id)
  expect(t).toBeGreaterThanOrEqual(before)
  expect(t).toBeLessThanOrEqual(after + 1)
  // Discord's documented example: 175928847299117063 was created 2016-04-30T11:18:25.796Z
  expect(new Date(snowflakeTime('175928847299117063')).toISOString()).toBe('2016-04-30T11:18:25.796Z')
})

test('moving the clock back never repeats an id', () => {
  const a = snowflake()
  clock.advance(-60_000)
  const b = snowflake()
  expect(BigInt(b) > BigInt(a)).toBe(true)
})
