// README's "Three nodes on one machine" (in "Running several nodes"), run by bash as written: its Redis and its three
// nodes, with this test's free ports, its own folder for Redis and the logs, and a database of its own. The nodes
// come up, READY names the load balancer (PUBLIC_URL) as the resume address, a message posted through the first
// reaches a socket on the third, and SIGTERM to one (by the pid its log
// line gives) sends its socket op 7.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openRedis } from '../../src/cluster/redis'
import { cluster as postgresCluster, type TestDatabase, testDatabase } from '../db/postgres'
import { GatewayClient } from '../gateway-client'
import { freePort } from '../ops/process-helpers'
import { call, newApp, newUser, present } from './harness'

const ROOT = join(import.meta.dir, '../..')
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
const section = /^\*\*Three nodes on one machine\*\*([\s\S]*?)\n\n(?! {4})/m.exec(readme)?.[1] ?? ''
const commands = section
  .split('\n')
  .filter((line) => /^ {4}\S/.test(line))
  .map((line) => line.trim())

let database: TestDatabase
let dir: string
const redisPort = freePort()
const ports = [freePort(), freePort(), freePort()]
const pids: number[] = []
let env: Record<string, string | undefined>

beforeAll(async () => {
  if (!present) return
  await postgresCluster()
  database = await testDatabase()
  dir = mkdtempSync(join(tmpdir(), 'lobby-readme-nodes-'))
  // The operator's default log level (the test preload silences logs): the nodes' `listening` lines are read.
  env = {
    ...process.env,
    LOG_LEVEL: 'info',
    DATABASE_URL: database.url,
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
  }
}, 60_000)
afterAll(async () => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  if (present) {
    const redis = openRedis(`redis://127.0.0.1:${redisPort}`, 'test')
    redis.on('error', () => {}) // it reconnects to the server it just shut down
    await redis.call('SHUTDOWN', 'NOSAVE').catch(() => {})
    redis.disconnect()
  }
  await database?.sql.end()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** The section's lines with this test's ports, folder and database in place of the README's. */
function asRun(line: string): string {
  return line
    .replaceAll('/var/lib/lobby-redis', join(dir, 'redis'))
    .replaceAll('/var/log/lobby', join(dir, 'logs'))
    .replaceAll('6379', String(redisPort))
    .replaceAll('postgres://lobby:secret@127.0.0.1:5432/lobby', database.url)
    .replaceAll('8081 8082 8083', ports.join(' '))
}

describe.skipIf(!present)('README: three nodes on one machine', () => {
  test('the commands start Redis and three nodes that share one Gateway', async () => {
    expect(commands.map((c) => c.split(' ')[0])).toEqual(['mkdir', 'redis-server', 'export', 'for'])
    const shell = Bun.spawn(['bash', '-ec', commands.map(asRun).join('\n')], { cwd: ROOT, env, stderr: 'pipe' })
    expect(await shell.exited).toBe(0)
    const logOf = (port: number) => {
      try {
        return readFileSync(join(dir, 'logs', `node-${port}.log`), 'utf8')
      } catch {
        return ''
      }
    }
    for (const port of ports) {
      for (const end = Date.now() + 30_000; !/listening/.test(logOf(port)); await Bun.sleep(50))
        if (Date.now() > end) throw new Error(`node ${port} did not start: ${logOf(port)}`)
      pids.push(Number(/pid[=":]+(\d+)/.exec(logOf(port))![1]))
    }
    const nodes = ports.map((port) => ({ url: `http://127.0.0.1:${port}`, port }))
    for (const node of nodes) expect((await fetch(`${node.url}/healthz`)).status).toBe(200)

    const app = await newApp(env)
    const user = await newUser(env)
    const lobby = await call(nodes[0], 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
    const { client, ready } = await GatewayClient.identified(user.token, {}, nodes[2].port)
    try {
      // Libraries resume at the load balancer's address (PUBLIC_URL), not at the node they lose.
      expect(ready.resume_gateway_url).toBe('ws://localhost:8080/gateway')
      expect(
        (await call(nodes[0], 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'hi' })).status,
      ).toBe(201)
      expect((await client.waitFor('LOBBY_MESSAGE_CREATE', 5000)).d.content).toBe('hi')
      process.kill(pids[2], 'SIGTERM')
      await client.waitFor((f) => f.op === 7, 5000)
    } finally {
      client.close()
    }
  }, 90_000)
})
