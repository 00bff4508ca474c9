// Turns of periodic jobs among nodes (src/cluster/turns.ts) when Redis does not answer: the job skips its turn after
// a bounded wait instead of waiting for good (a job that runs one at a time would never run again), the outage is
// logged once however many turns are skipped, and turns are taken again once Redis answers.
import { afterEach, expect, test } from 'bun:test'
import { shareTurns } from '../../src/cluster/turns'
import type { Redis } from '../../src/cluster/redis'
import { captureLog, type LogFormat, type LogLevel, setLogOptions } from '../../src/core/log'
import { myTurn } from '../../src/core/turns'

let answering = false
// The two commands a turn sends (RENEW by EVALSHA, then SET NX): silent, or answering "not held" then "taken".
const redis = {
  evalsha: () => (answering ? Promise.resolve(0) : new Promise(() => {})),
  set: () => (answering ? Promise.resolve('OK') : new Promise(() => {})),
} as unknown as Redis

let stop: (() => void) | undefined
afterEach(() => {
  stop?.()
  captureLog(undefined)
  setLogOptions((process.env.LOG_LEVEL ?? 'silent') as LogLevel, (process.env.LOG_FORMAT ?? 'text') as LogFormat)
})

test('Redis silent: each turn is skipped within the bound, the outage logged once; turns come back with Redis', async () => {
  const lines: string[] = []
  setLogOptions('info', 'text')
  captureLog((line) => void lines.push(line))
  stop = shareTurns(redis, 'node-a', { askMs: 50 })
  const started = performance.now()
  expect(await myTurn('housekeeping', 600_000)).toBe(false)
  expect(await myTurn('lobby-idle-sweep', 1000)).toBe(false)
  expect(performance.now() - started).toBeLessThan(1000)
  expect(lines.filter((l) => l.includes('WARN'))).toHaveLength(1)
  answering = true
  expect(await myTurn('housekeeping', 600_000)).toBe(true)
  expect(lines.filter((l) => l.includes('Redis answers again'))).toHaveLength(1)
})
