// `bun bench/cluster.ts`: one node against three (issue 31 item 7). On this 2-core machine every server runs on
// SERVER_CPU (the single SQLite server, then the cluster's nodes together) and wrk and the socket clients on LOAD_CPU,
// so three nodes share the one core one server had: what is measured is per-node efficiency — the throughput the three
// reach together on that core over the single SQLite server's (goal ≥ 0.7) — not a speed-up. Then the cross-node
// fan-out: a writer posts lobby messages one after another through one node, members' sockets spread over the nodes
// (single server: all on it) time each delivery; p99 against the single server's (goal ≤ 2×).
// PostgreSQL and redis-server are started as the tests start theirs (temp dirs, loopback; PostgreSQL durability off).
// Settings: BENCH_SECONDS (5 per measurement), BENCH_CONNECTIONS (32, split over the nodes), BENCH_POSTS (300).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedis } from '../tests/cluster/redis'
import { BUN, LOAD_CPU, loadAverage, machine, pinned, requireTools, SERVER_CPU } from './lib/machine'
import { type Server, startOurs } from './lib/servers'
import { seedOffline, seedOnline, type World } from './lib/world'
import { type Request, wrk } from './lib/wrk'

if (!process.env.BENCH_PINNED) {
  requireTools()
  const proc = Bun.spawn(pinned(LOAD_CPU, [BUN, import.meta.path, ...process.argv.slice(2)]), {
    env: { ...process.env, BENCH_PINNED: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await proc.exited)
}

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const posts = Number(process.env.BENCH_POSTS ?? 300)

const requests = {
  'lobby-get': (w: World): Request => ({
    method: 'GET',
    path: `/api/v9/lobbies/${w.lobby.id}`,
    headers: { authorization: w.bot },
  }),
  'users-me': (w: World): Request => ({
    method: 'GET',
    path: '/api/v9/users/@me',
    headers: { authorization: w.main.token },
  }),
}

/** Requests per second the servers answer together: one wrk per server at once, the connections split between them. */
async function throughput(servers: Server[], request: Request, dir: string): Promise<number> {
  const per = Math.max(1, Math.round(connections / servers.length))
  await Promise.all(servers.map((s) => wrk(s.url, request, { seconds: 1, connections: per, threads: 1 }, dir)))
  const results = await Promise.all(
    servers.map((s) => wrk(s.url, request, { seconds, connections: per, threads: 1 }, dir)),
  )
  for (const r of results) if (r.errors || r.non2xx) throw new Error(`wrk: ${r.errors} errors, ${r.non2xx} non-2xx`)
  return results.reduce((sum, r) => sum + r.rps, 0)
}

/** An identified Gateway socket that notes when each lobby message (its content: the post's send time) arrives. */
async function listener(port: number, token: string, delays: number[]): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=10&encoding=json`)
  await new Promise<void>((resolve, reject) => {
    ws.onerror = () => reject(new Error('socket error'))
    ws.onmessage = (event) => {
      const frame = JSON.parse(String(event.data))
      if (frame.op === 10) ws.send(JSON.stringify({ op: 2, d: { token, properties: {}, intents: 0 } }))
      else if (frame.t === 'READY') resolve()
      else if (frame.t === 'LOBBY_MESSAGE_CREATE') delays.push(performance.now() - Number(frame.d.content))
    }
  })
  return ws
}

/** Delivery times (ms) of `posts` messages through `writer` to members' sockets spread over `servers`. */
async function fanout(servers: Server[], writer: Server, world: World): Promise<{ p50: number; p99: number }> {
  const delays: number[] = []
  const members = world.users.slice(0, 8)
  const sockets = await Promise.all(members.map((u, i) => listener(servers[i % servers.length].port, u.token, delays)))
  try {
    for (let i = 0; i < posts; i++) {
      const r = await fetch(`${writer.url}/api/v9/lobbies/${world.fanoutLobby.id}/messages`, {
        method: 'POST',
        headers: { authorization: world.bot, 'content-type': 'application/json' },
        body: JSON.stringify({ content: String(performance.now()) }),
      })
      if (r.status !== 201) throw new Error(`post: ${r.status}`)
    }
    for (const end = Date.now() + 10_000; delays.length < posts * members.length && Date.now() < end; )
      await Bun.sleep(20)
  } finally {
    for (const ws of sockets) ws.close()
  }
  delays.sort((a, b) => a - b)
  const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))]
  return { p50: at(0.5), p99: at(0.99) }
}

type Figures = { lobby: number; me: number; fan: { p50: number; p99: number } }

async function measure(servers: Server[], world: World, dir: string): Promise<Figures> {
  return {
    lobby: await throughput(servers, requests['lobby-get'](world), dir),
    me: await throughput(servers, requests['users-me'](world), dir),
    fan: await fanout(servers, servers[0], world),
  }
}

const m = machine()
console.log(
  `bench cluster: ${m.nproc} CPUs (${m.cpu}), Bun ${m.bun}; servers on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}`,
)
const loads = [loadAverage()]
const dirs: string[] = []
const started: Server[] = []
const redis = await startRedis()
try {
  // One SQLite server.
  const single = mkdtempSync(join(tmpdir(), 'lobby-bench-one-'))
  dirs.push(single)
  const offline = await seedOffline(single, 16)
  const one = await startOurs(single, { tag: 'single' })
  started.push(one)
  const alone = await measure([one], await seedOnline(one, single, offline), single)
  await one.stop()
  loads.push(loadAverage())

  // The cluster: PostgreSQL and Redis, one node then three, all on SERVER_CPU.
  const { testDatabase } = await import('../tests/db/postgres')
  const database = await testDatabase()
  await database.sql.end()
  process.env.BENCH_DATABASE_URL = database.url
  process.env.REDIS_URL = redis.url
  const shared = mkdtempSync(join(tmpdir(), 'lobby-bench-nodes-'))
  dirs.push(shared)
  const first = await startOurs(shared, { tag: 'node-1' })
  started.push(first)
  const world = await seedOnline(first, shared, await seedOffline(shared, 16))
  const oneNode = await measure([first], world, shared)
  loads.push(loadAverage())
  const nodes = [first, await startOurs(shared, { tag: 'node-2' }), await startOurs(shared, { tag: 'node-3' })]
  started.push(...nodes.slice(1))
  const threeNodes = await measure(nodes, world, shared)
  loads.push(loadAverage())

  const row = (what: string, f: Figures) =>
    `| ${what} | ${f.lobby.toFixed(0)} (${(f.lobby / alone.lobby).toFixed(2)}) | ${f.me.toFixed(0)} (${(f.me / alone.me).toFixed(2)}) | ${f.fan.p50.toFixed(2)} / ${f.fan.p99.toFixed(2)} (${(f.fan.p99 / alone.fan.p99).toFixed(2)}×) |`
  console.log(`
| servers (all on CPU ${SERVER_CPU}) | GET /lobbies/{id} req/s (÷ single) | GET /users/@me req/s (÷ single) | fan-out p50 / p99 ms (p99 ÷ single) |
|---|---|---|---|
${row('one server, SQLite', alone)}
${row('one node, PostgreSQL + Redis', oneNode)}
${row('three nodes, PostgreSQL + Redis', threeNodes)}

wrk -t1, ${connections} connections split over the servers, ${seconds} s each after 1 s warm-up; fan-out: ${posts} posts one
after another through the first server to 8 members' sockets (round-robin over the servers); 1-min load: ${loads.join(', ')}`)
} finally {
  for (const s of started) await s.stop().catch(() => {})
  redis.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}
process.exit(0)
