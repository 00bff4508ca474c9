// A Redis that stops answering without closing its connections (SIGSTOP: a hung server, or a network path that drops
// packets) must not hold requests forever: a command on the node's connection fails after REDIS_COMMAND_TIMEOUT_MS and
// a request that needed it (here the login's shared security limit) is answered 503 with Discord's body; once Redis
// answers again, so does the node. The test server runs on SQLite with the node's sharing started on it directly, as
// tests/cluster/shared-limits.test.ts does.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ClusterNode, startClusterNode } from '../../src/cluster/node'
import { REDIS_COMMAND_TIMEOUT_MS } from '../../src/cluster/redis'
import { api, makeUser } from '../helpers'
import { present } from './harness'
import { type RedisServer, startRedis } from './redis'

let redis: RedisServer | undefined
let node: ClusterNode | undefined
let stopped = false

beforeAll(async () => {
  if (!present) return
  redis = await startRedis()
  node = await startClusterNode(redis.url)
})
afterAll(async () => {
  if (stopped) process.kill(redis!.pid, 'SIGCONT')
  await node?.stop()
  redis?.stop()
})

describe.skipIf(!present)('a Redis that hangs', () => {
  test('a login needing the shared limits is answered 503 within the command timeout, and works again after', async () => {
    const { email, password } = await makeUser()
    process.kill(redis!.pid, 'SIGSTOP')
    stopped = true
    const started = performance.now()
    const hung = await api('POST', '/auth/login', { body: { login: email, password: 'wrong-password-1' } })
    const took = performance.now() - started
    expect(hung.status).toBe(503)
    expect(hung.body).toEqual({ code: 0, message: '503: Service Unavailable' })
    expect(Number(hung.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(took).toBeGreaterThanOrEqual(REDIS_COMMAND_TIMEOUT_MS - 50)
    expect(took).toBeLessThan(REDIS_COMMAND_TIMEOUT_MS + 3000)
    process.kill(redis!.pid, 'SIGCONT')
    stopped = false
    const wrong = await api('POST', '/auth/login', { body: { login: email, password: 'wrong-password-1' } })
    expect(wrong.status).toBe(400)
    const right = await api('POST', '/auth/login', { body: { login: email, password } })
    expect(right.status).toBe(200)
    expect(typeof right.body.token).toBe('string')
  }, 20_000)
})
