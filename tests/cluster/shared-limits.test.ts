// A node in cluster mode counts the security limits in Redis (cluster/node.ts → core/ratelimit.ts useSharedLimits):
// wrong passwords sent to this server and attempts counted by another node's connection share one allowance, the
// 429 carries Discord's retry_after, and a correct password releases its attempt there as it does in memory. The test
// server runs on SQLite (cluster mode proper needs PostgreSQL, refused otherwise: the config test below); the node's
// sharing is started on it directly.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startClusterNode, type ClusterNode } from '../../src/cluster/node'
import { redisRateLimits } from '../../src/cluster/ratelimit'
import { openRedis, type Redis } from '../../src/cluster/redis'
import { ConfigError, loadConfig } from '../../src/config'
import { leaseNodeId, nodeIdKey } from '../../src/cluster/leases'
import { perIp } from '../../src/core/ratelimit'
import { snowflake } from '../../src/core/snowflake'
import { StartupError, startServer } from '../../src/server'
import { api, makeUser } from '../helpers'
import { type RedisServer, startRedis } from './redis'

let redis: RedisServer
let node: ClusterNode
let other: Redis
let first: Awaited<ReturnType<typeof leaseNodeId>>

beforeAll(async () => {
  redis = await startRedis()
  // Another node holds id 0 already: this one takes the next free id.
  other = openRedis(redis.url, 'other-node')
  first = await leaseNodeId(other, 'first-node')
  node = await startClusterNode(redis.url)
})
afterAll(async () => {
  await node?.stop()
  await first?.release()
  other?.disconnect()
  redis?.stop()
})

// auth/login.ts: failures per account and address, 10 in 15 minutes.
const PER_ACCOUNT_AND_IP = { limit: 10, windowMs: 15 * 60_000 }

describe('security limits shared through Redis', () => {
  test('30 parallel wrong passwords, 4 of them counted first by another node: exactly 6 reach the password check', async () => {
    const { email } = await makeUser()
    const key = email.trim().toLowerCase()
    const elsewhere = redisRateLimits(other)
    for (let i = 0; i < 4; i++) await elsewhere.reserve(perIp('login-account-ip', '127.0.0.1', PER_ACCOUNT_AND_IP, key))
    const replies = await Promise.all(
      Array.from({ length: 30 }, () =>
        api('POST', '/auth/login', { body: { login: email, password: 'wrong-password-1' } }),
      ),
    )
    const statuses = replies.map((r) => r.status)
    expect(statuses.filter((s) => s === 400)).toHaveLength(6)
    expect(statuses.filter((s) => s === 429)).toHaveLength(24)
    const refused = replies.find((r) => r.status === 429)!
    expect(refused.body).toMatchObject({ code: 0, global: false })
    expect(refused.body.retry_after).toBeGreaterThan(0)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // The counts are in Redis, where every node sees them.
    const keys = await other.keys('rl:login-account-ip:*')
    expect(keys).toHaveLength(1)
    expect(await other.zcard(keys[0])).toBe(10)
  })

  test('a correct password takes its attempt back and forgives this address: the Redis count is emptied', async () => {
    const { email, password } = await makeUser()
    const key = email.trim().toLowerCase()
    for (let i = 0; i < 3; i++)
      expect((await api('POST', '/auth/login', { body: { login: email, password: 'wrong-password-1' } })).status).toBe(
        400,
      )
    const slot = `rl:login-account-ip:${key}|127.0.0.1`
    expect(await other.zcard(slot)).toBe(3)
    expect((await api('POST', '/auth/login', { body: { login: email, password } })).status).toBe(200)
    expect(await other.exists(slot)).toBe(0)
  })
})

describe('snowflakes of a node', () => {
  test('carry its leased node id (0–1023) in the worker and process bits; another node holds another id', async () => {
    expect(first.id).toBe(0)
    expect(node.nodeId).toBe(1)
    const ids = Array.from({ length: 50 }, () => snowflake())
    for (const id of ids) expect(Number((BigInt(id) >> 12n) & 0x3ffn)).toBe(node.nodeId)
    expect(new Set(ids).size).toBe(50)
    expect(await other.get(nodeIdKey(node.nodeId))).toBeString()
    const second = await leaseNodeId(other, 'second-node')
    expect(second.id).not.toBe(node.nodeId)
    await second.release()
  })
})

describe('cluster mode needs PostgreSQL', () => {
  test('REDIS_URL with SQLite is refused with a line that says what to set; with a postgres DATABASE_URL it is taken', () => {
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(ConfigError)
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' })).toThrow(/DATABASE_URL=postgres/)
    expect(() => loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'mysql://x' })).toThrow(ConfigError)
    expect(() => loadConfig({ REDIS_URL: 'http://127.0.0.1:6379', DATABASE_URL: 'postgres://x/y' })).toThrow(
      /REDIS_URL must use redis: or rediss:/,
    )
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://x/y' }).redisUrl).toBe(
      'redis://127.0.0.1:6379',
    )
    expect(loadConfig({}).redisUrl).toBeUndefined()
  })

  test('a server given REDIS_URL without a PostgreSQL database does not start', async () => {
    // No DATABASE_URL whatever the test run's database (TEST_DATABASE=postgres sets one for the test server).
    const sqlite = { port: 0, redisUrl: redis.url, databaseUrl: undefined }
    await expect(startServer(sqlite)).rejects.toThrow(StartupError)
    await expect(startServer(sqlite)).rejects.toThrow(/DATABASE_URL=postgres/)
  })
})
