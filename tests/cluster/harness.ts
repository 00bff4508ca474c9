// Real nodes for a test file: `bun src/main.ts` processes on one PostgreSQL database and one redis-server (both started
// here from Debian's packages: tests/db/postgres.ts, tests/cluster/redis.ts), with REST calls, users and applications
// made through them and the CLI. Call `useNodes(n)` at the top of a file; `present` says whether the engines exist.
import { afterAll, beforeAll } from 'bun:test'
import { cluster as postgresCluster, postgresBinDir, type TestDatabase, testDatabase } from '../db/postgres'
import { cli, type Env, freshEnv, serve, type Served } from '../ops/process-helpers'
import { type RedisServer, redisServerPath, startRedis } from './redis'

export const present = postgresBinDir() !== undefined && redisServerPath() !== undefined

export type Nodes = {
  database: TestDatabase
  redis: RedisServer
  env: Env
  nodes: Served[]
}

/** Start `count` nodes before the file's tests (none when the engines are absent), stop them and the engines after. */
export function useNodes(count: number, extra: Env = {}): Nodes {
  const world = { nodes: [] as Served[] } as Nodes
  beforeAll(async () => {
    if (!present) return
    await postgresCluster()
    world.database = await testDatabase()
    world.redis = await startRedis()
    world.env = freshEnv({
      DATABASE_URL: world.database.url,
      REDIS_URL: world.redis.url,
      LOG_LEVEL: 'warn',
      ...extra,
    }).env
    world.nodes = await Promise.all(Array.from({ length: count }, () => serve(world.env)))
  }, 60_000)
  afterAll(async () => {
    await Promise.all(world.nodes.filter((n) => n.proc.exitCode === null).map((n) => n.stop()))
    world.redis?.stop()
    await world.database?.sql.end()
  })
  return world
}

/** A REST call to one node: its status and JSON body. */
export async function call(node: { url: string }, method: string, path: string, token?: string, body?: unknown) {
  const r = await fetch(`${node.url}/api/v10${path}`, {
    method,
    headers: { ...(token ? { authorization: token } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await r.text()
  return { status: r.status, body: text ? JSON.parse(text) : undefined }
}

let users = 0
/** A user made by the CLI (`user create`), with a token. */
export async function newUser(env: Env): Promise<{ id: string; token: string; email: string; password: string }> {
  const email = `cluster-user-${++users}-${Date.now()}@example.test`
  const password = 'a cluster of nodes passphrase'
  const made = await cli(env, ['user', 'create', '--email', email, '--password', password])
  if (made.code !== 0) throw new Error(made.stderr)
  const { id, token } = JSON.parse(made.stdout)
  return { id, token, email, password }
}

/** An application made by the CLI (`app create`), with its bot's Authorization. */
export async function newApp(env: Env): Promise<{ id: string; bot: string }> {
  const made = await cli(env, ['app', 'create', '--name', `Cluster game ${Date.now()}`])
  if (made.code !== 0) throw new Error(made.stderr)
  const app = JSON.parse(made.stdout)
  return { id: app.id, bot: `Bot ${app.bot_token}` }
}
