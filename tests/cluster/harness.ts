// Nodes of a cluster as an operator runs them, for the tests of tests/cluster/: `bun src/main.ts` processes with
// DATABASE_URL (one PostgreSQL database of the run's server, tests/db/postgres.ts) and REDIS_URL (a redis-server of
// the file's own, tests/cluster/redis.ts), and what the tests do through them: REST calls, users and applications
// made with the CLI, identified Gateway sockets. Stopped (nodes by SIGTERM, engines by pid) by `stop()`; or, for a
// whole file, `await useNodes(n)` at its top.
import { afterAll } from 'bun:test'
import { cluster as postgresCluster, postgresBinDir, type TestDatabase, testDatabase } from '../db/postgres'
import { GatewayClient } from '../gateway-client'
import { cli, type Env, freshEnv, serve, type Served } from '../ops/process-helpers'
import { type RedisServer, redisServerPath, startRedis } from './redis'

/** Whether PostgreSQL's and Redis's binaries are installed (the cluster tests skip without them). */
export const present = postgresBinDir() !== undefined && redisServerPath() !== undefined

export type Reply = { status: number; body: any }

/** A REST call to one node (`token`: the Authorization header as given). */
export async function call(
  node: { url: string },
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<Reply> {
  const r = await fetch(`${node.url}/api/v10${path}`, {
    method,
    headers: { ...(token ? { authorization: token } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await r.text()
  return { status: r.status, body: text ? JSON.parse(text) : undefined }
}

export type TestCluster = {
  database: TestDatabase
  redis: RedisServer
  /** The nodes' environment (each node may add its own: `start`). */
  env: Env
  nodes: Served[]
  /**
   * Start one more node (not added to `nodes`), with `extra` in its environment. Given PUBLIC_URL (a load balancer's
   * address, which its listening line names), give it PORT too: its own address is then 127.0.0.1:PORT.
   */
  start(extra?: Env): Promise<Served>
  newUser(): Promise<{ id: string; token: string; email: string; password: string }>
  newApp(): Promise<{ id: string; bot: string }>
  /** A socket identified with `token` on `node` (closed by stop()). */
  socketOn(node: Served, token: string): Promise<{ client: GatewayClient; ready: any }>
  /**
   * A lobby (made through the first node) of one new member with an identified socket on each of `on`, and a way to
   * post to it through any node.
   */
  lobbyWithSockets(on: Served[]): Promise<{
    id: string
    /** The lobby's application's Bot Authorization. */
    bot: string
    /** Its member. */
    member: { id: string; token: string }
    sockets: GatewayClient[]
    post(node: Served, content: string): Promise<Reply>
  }>
  /** A socket connected to `node`, not identified (closed by stop()). */
  connect(node: Served): Promise<GatewayClient>
  stop(): Promise<void>
}

let users = 0

/** A user made by the CLI (`user create`), with a token. */
/** The dispatch type of a log entry's fields (`f`: its frame), or undefined for an entry with no frame. */
export function frameType(fields: string[]): string | undefined {
  const at = fields.indexOf('f')
  return at < 0 ? undefined : (JSON.parse(fields[at + 1]) as { t?: string }).t
}

export async function newUser(env: Env): Promise<{ id: string; token: string; email: string; password: string }> {
  const email = `node-user-${++users}-${Date.now()}@example.test`
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

/** The engines and `count` nodes (`extra`: each node's own environment, by index). */
export async function startTestCluster(count = 3, extra: (i: number) => Env = () => ({})): Promise<TestCluster> {
  await postgresCluster()
  const database = await testDatabase()
  const redis = await startRedis()
  const env = freshEnv({ DATABASE_URL: database.url, REDIS_URL: redis.url, LOG_LEVEL: 'warn' }).env
  const sockets: GatewayClient[] = []
  const started: Served[] = []
  const start = async (more: Env = {}) => {
    const all = { ...env, ...more }
    const served = await serve(all)
    started.push(served)
    // With PUBLIC_URL the listening line names the public address, not the node's: its PORT is where it listens.
    const port = Number(all.PORT)
    return (all.PUBLIC_URL || all.BASE_URL) && port ? { ...served, url: `http://127.0.0.1:${port}`, port } : served
  }
  const nodes = await Promise.all(Array.from({ length: count }, (_, i) => start(extra(i))))
  const made: TestCluster = {
    database,
    redis,
    env,
    nodes,
    start,
    newUser: () => newUser(env),
    newApp: () => newApp(env),
    async socketOn(node, token) {
      const { client, ready } = await GatewayClient.identified(token, {}, node.port)
      sockets.push(client)
      return { client, ready }
    },
    async lobbyWithSockets(on) {
      const app = await made.newApp()
      const user = await made.newUser()
      const lobby = await call(nodes[0], 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
      if (lobby.status !== 201) throw new Error(`POST /lobbies answered ${lobby.status}`)
      const sockets = await Promise.all(on.map(async (node) => (await made.socketOn(node, user.token)).client))
      const post = (node: Served, content: string) =>
        call(node, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content })
      return { id: lobby.body.id as string, bot: app.bot, member: user, sockets, post }
    },
    async connect(node) {
      const client = await GatewayClient.connect({ port: node.port })
      sockets.push(client)
      return client
    },
    async stop() {
      for (const s of sockets) s.close()
      await Promise.all(started.filter((n) => n.proc.exitCode === null).map((n) => n.stop()))
      redis.stop()
      await database.sql.end()
    },
  }
  return made
}

/**
 * `count` nodes for the whole file: started before its tests (none when the engines are absent), stopped after. The
 * fields are filled in by then. `extra`: every node's own environment, or each one's by index.
 */
export async function useNodes(count: number, extra: Env | ((i: number) => Env) = {}): Promise<TestCluster> {
  const world = {} as TestCluster
  // Nodes drain before they exit (SIGTERM): on a loaded machine that outlasts the hooks' default 5 s.
  afterAll(async () => {
    await world.stop?.()
  }, 30_000)
  // Started at the file's top level (the callers await it), not in a hook: bun test 1.4.5 kills every process a
  // file's hooks and tests started when a test times out or a stale timer says one did (oven-sh/bun#38774), and does
  // not track what the top level starts (tests/web/browser.ts useBrowser says the same).
  if (present) Object.assign(world, await startTestCluster(count, typeof extra === 'function' ? extra : () => extra))
  return world
}
