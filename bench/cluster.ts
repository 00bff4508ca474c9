// `bun bench/cluster.ts`: one node against three (issue 31 item 7). On this 2-core machine every server runs on
// SERVER_CPU (the single SQLite server, then the cluster's nodes together) and wrk and the socket clients on LOAD_CPU,
// so three nodes share the one core one server had: what is measured is per-node efficiency — the throughput the three
// reach together on that core over the single SQLite server's (goal ≥ 0.7) — not a speed-up. Then the cross-node
// fan-out: a writer posts lobby messages one after another through one node, members' sockets spread over the nodes
// (single server: all on it) time each delivery; p99 against the single server's (goal ≤ 2×).
// PostgreSQL and redis-server are started as the tests start theirs (temp dirs, loopback; PostgreSQL durability off),
// on BENCH_STORES_CPU: by default LOAD_CPU, beside wrk and the clients (as a deployment keeps its database servers off
// its nodes' cores); BENCH_STORES_CPU=0 puts them on the nodes' core too (postgres's backends fork from the postmaster
// moved there, so every connection's backend runs there).
// Rounds alternate (BENCH_ROUNDS, 3): the single server, then the cluster, again and again, both kept running, so that
// each ratio compares two measurements a minute apart on a machine whose load moves; the table shows each figure's
// median and the median of the rounds' ratios.
// Settings: BENCH_SECONDS (5 per measurement), BENCH_CONNECTIONS (32, split over the nodes), BENCH_POSTS (1000),
// BENCH_WARM_POSTS (50, before them, unmeasured, as bench/http.ts's fan-out warms up), BENCH_TRACE=1 (below).
// The write rows (bench/lib/writes.ts, issue 42): lobby-message POSTs through 1, 2, 4, 8 nodes, as many as half the
// machine's CPUs allow (BENCH_WRITE_NODES, e.g. `1,2`, chooses), to one shared lobby and to a lobby per node, with
// PostgreSQL's wait events sampled meanwhile. BENCH_NODE_CPUS (e.g. `0-7`) spreads the write rows' nodes one per CPU
// of the list (default: all on SERVER_CPU, as above); BENCH_STORES_CPU takes a list too (e.g. `8-13`).
// BENCH_ONLY=reads or BENCH_ONLY=writes runs one part. On 16 CPUs, e.g.: BENCH_ONLY=writes BENCH_NODE_CPUS=0-7
// BENCH_STORES_CPU=8-14 BENCH_LOAD_CPU=15 bun bench/cluster.ts (nodes one per core, PostgreSQL and Redis beside).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startRedis } from '../tests/cluster/redis'
import { BUN, LOAD_CPU, loadAverage, machine, pinned, requireTools, SERVER_CPU } from './lib/machine'
import { type Server, startOurs } from './lib/servers'
import { seedOffline, seedOnline, type World } from './lib/world'
import { writeRows, writeTable } from './lib/writes'
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
const posts = Number(process.env.BENCH_POSTS ?? 1000)
const warmPosts = Number(process.env.BENCH_WARM_POSTS ?? 50)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const storesCpu = process.env.BENCH_STORES_CPU ?? String(LOAD_CPU)
const only = process.env.BENCH_ONLY

/** Move a running server (all its threads) to `cpu` (a CPU or a taskset list); processes it forks later start there. */
async function moveTo(cpu: number | string, pid: number): Promise<void> {
  const taskset = Bun.spawn(['taskset', '-a', '-cp', String(cpu), String(pid)], { stdout: 'ignore' })
  if ((await taskset.exited) !== 0) throw new Error(`taskset could not move pid ${pid} to CPU ${cpu}`)
}

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

/** Wall-clock ms with µs, comparable with the nodes' trace (src/cluster/trace.ts wallMs). */
const wallMs = () => performance.timeOrigin + performance.now()

/** One lobby message reaching one socket: its sequence, when it was posted and received, the socket's server. */
type Delivery = { seq: number; sent: number; received: number; server: number }

/** An identified Gateway socket that notes when each lobby message (its content: the post's send time) arrives. */
async function listener(port: number, token: string, server: number, seen: Delivery[]): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/gateway?v=10&encoding=json`)
  await new Promise<void>((resolve, reject) => {
    ws.onerror = () => reject(new Error('socket error'))
    ws.onmessage = (event) => {
      const received = wallMs()
      const frame = JSON.parse(String(event.data))
      if (frame.op === 10) ws.send(JSON.stringify({ op: 2, d: { token, properties: {}, intents: 0 } }))
      else if (frame.t === 'READY') resolve()
      else if (frame.t === 'LOBBY_MESSAGE_CREATE' && frame.d.content !== 'warm-up')
        seen.push({ seq: frame.s, sent: Number(frame.d.content), received, server })
    }
  })
  return ws
}

type Percentiles = { p50: number; p99: number }

function percentiles(values: number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
  return { p50: at(0.5), p99: at(0.99) }
}

/** Delivery times (ms) of `posts` messages through `writer` to members' sockets spread over `servers`. */
async function fanout(servers: Server[], writer: Server, world: World): Promise<Percentiles & { seen: Delivery[] }> {
  const seen: Delivery[] = []
  const members = world.users.slice(0, 8)
  const sockets = await Promise.all(
    members.map((u, i) => listener(servers[i % servers.length].port, u.token, i % servers.length, seen)),
  )
  const post = async (content: string) => {
    const r = await fetch(`${writer.url}/api/v9/lobbies/${world.fanoutLobby.id}/messages`, {
      method: 'POST',
      headers: { authorization: world.bot, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    })
    if (r.status !== 201) throw new Error(`post: ${r.status}`)
  }
  try {
    // Unmeasured first: each pool connection's first use of a statement, code paths not yet compiled.
    for (let i = 0; i < warmPosts; i++) await post('warm-up')
    await Bun.sleep(200)
    for (let i = 0; i < posts; i++) await post(String(wallMs()))
    for (const end = Date.now() + 10_000; seen.length < posts * members.length && Date.now() < end; )
      await Bun.sleep(20)
  } finally {
    for (const ws of sockets) ws.close()
  }
  return { ...percentiles(seen.map((d) => d.received - d.sent)), seen }
}

// BENCH_TRACE=1: each node of the cluster notes the hops of every log entry (LOBBY_FANOUT_TRACE, src/cluster/trace.ts)
// and the fan-out prints where each delivery's time went, hop by hop, in order.
const trace = process.env.BENCH_TRACE === '1'
const traceFile = (dir: string, tag: string) => join(dir, `${tag}.trace`)
const HOPS = [
  ['sent', 'committing', 'REST request + the write transaction up to its COMMIT'],
  ['committing', 'committed', 'outbox insert + COMMIT'],
  ['committed', 'selected', 'relay: its transaction takes the rows (DELETE … RETURNING)'],
  ['selected', 'read', 'Lua append → the reading node has the XREAD answer'],
  ['read', 'published', 'decode + local publish on the reading node'],
  ['published', 'received', 'socket → client'],
] as const

/** Hop → ms of each sequence, from one node's trace file. */
function readTrace(file: string): Map<number, Map<string, number>> {
  const bySeq = new Map<number, Map<string, number>>()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [seq, hop, at] = line.split(' ')
    if (!at) continue
    const hops = bySeq.get(Number(seq)) ?? new Map<string, number>()
    hops.set(hop, Number(at))
    bySeq.set(Number(seq), hops)
  }
  return bySeq
}

async function printBreakdown(what: string, files: string[], seen: Delivery[]): Promise<void> {
  await Bun.sleep(500) // the nodes write their traces every 200 ms
  const nodes = files.map(readTrace)
  const rows: Record<string, number>[] = []
  for (const d of seen) {
    const writer = nodes[0].get(d.seq)
    const reader = nodes[d.server].get(d.seq)
    if (!writer || !reader) continue
    const at: Record<string, number | undefined> = {
      sent: d.sent,
      committing: writer.get('committing'),
      committed: writer.get('committed'),
      selected: writer.get('selected'),
      appended: writer.get('appended'),
      read: reader.get('read'),
      published: reader.get('published'),
      received: d.received,
    }
    if (Object.values(at).some((t) => t === undefined)) continue
    const row: Record<string, number> = {
      total: d.received - d.sent,
      appendAnswer: at.appended! - at.selected!,
      at: d.sent,
      seq: d.seq,
      server: d.server,
    }
    for (const [from, to] of HOPS) row[to] = at[to]! - at[from]!
    rows.push(row)
  }
  const tail = [...rows].sort((a, b) => b.total - a.total).slice(0, Math.max(1, Math.ceil(rows.length / 100)))
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
  const line = (label: string, key: string) => {
    const p = percentiles(rows.map((r) => r[key]))
    return `| ${label} | ${p.p50.toFixed(2)} | ${p.p99.toFixed(2)} | ${mean(tail.map((r) => r[key])).toFixed(2)} |`
  }
  console.log(`
${what}: ${rows.length} deliveries traced of ${seen.length}; ms

| hop | p50 | p99 | mean over the slowest 1 % |
|---|---:|---:|---:|
${HOPS.map(([, to, label]) => line(label, to)).join('\n')}
| (the writer's append answer, beside the read) | ${percentiles(rows.map((r) => r.appendAnswer)).p50.toFixed(2)} | ${percentiles(rows.map((r) => r.appendAnswer)).p99.toFixed(2)} | ${mean(tail.map((r) => r.appendAnswer)).toFixed(2)} |
${line('**total**', 'total')}`)
  // The slowest deliveries one by one: when (s after the first post), on which node, and each hop (ms).
  const first = Math.min(...rows.map((r) => r.at))
  console.log(
    `\nslowest 1 % (s after the first post, node, seq: ${HOPS.map(([, to]) => to).join(' / ')} = total ms)\n` +
      tail
        .sort((a, b) => a.at - b.at)
        .map(
          (r) =>
            `${((r.at - first) / 1000).toFixed(3)} n${r.server + 1} #${r.seq}: ${HOPS.map(([, to]) => r[to].toFixed(2)).join(' / ')} = ${r.total.toFixed(2)}`,
        )
        .join('\n'),
  )
}

type Figures = { lobby: number; me: number; fan: Percentiles }

async function measureOnce(servers: Server[], world: World, dir: string, traces?: string[]): Promise<Figures> {
  const lobby = await throughput(servers, requests['lobby-get'](world), dir)
  const me = await throughput(servers, requests['users-me'](world), dir)
  const { seen, ...fan } = await fanout(servers, servers[0], world)
  if (traces) await printBreakdown(`fan-out over ${servers.length} node(s)`, traces, seen)
  return { lobby, me, fan }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** The rounds of the single server and of a cluster, measured one after the other. */
type Paired = { alone: Figures[]; cluster: Figures[] }
type Setup = { servers: Server[]; world: World; dir: string; traces?: string[] }

/** `rounds` rounds, each the single server then the cluster. */
async function alternate(single: Setup, cluster: Setup): Promise<Paired> {
  const paired: Paired = { alone: [], cluster: [] }
  for (let i = 0; i < rounds; i++) {
    paired.alone.push(await measureOnce(single.servers, single.world, single.dir))
    paired.cluster.push(await measureOnce(cluster.servers, cluster.world, cluster.dir, cluster.traces))
  }
  return paired
}

/** A cluster node, noting its hops in `dir` when BENCH_TRACE asks. */
const startNode = (dir: string, tag: string) =>
  startOurs(dir, { tag, env: trace ? { LOBBY_FANOUT_TRACE: traceFile(dir, tag) } : {} })

/** The cluster's nodes so far (node-1 first); `nodesUpTo` starts more. */
const clusterNodes: Server[] = []
async function nodesUpTo(n: number, dir: string): Promise<Server[]> {
  while (clusterNodes.length < n) {
    const node = await startNode(dir, `node-${clusterNodes.length + 1}`)
    started.push(node)
    clusterNodes.push(node)
  }
  return clusterNodes.slice(0, n)
}

/** The read rows and the fan-out: the single SQLite server against one node, then three nodes. */
async function reads(first: Server, world: World, shared: string): Promise<void> {
  // One SQLite server, kept running (idle while the cluster is measured): seeded and started without the cluster's
  // database and Redis in its environment.
  const singleDir = mkdtempSync(join(tmpdir(), 'lobby-bench-one-'))
  dirs.push(singleDir)
  const { BENCH_DATABASE_URL, REDIS_URL } = process.env
  delete process.env.BENCH_DATABASE_URL
  delete process.env.REDIS_URL
  let single: Setup
  try {
    const offline = await seedOffline(singleDir, 16)
    const one = await startOurs(singleDir, { tag: 'single' })
    started.push(one)
    single = { servers: [one], world: await seedOnline(one, singleDir, offline), dir: singleDir }
  } finally {
    Object.assign(process.env, { BENCH_DATABASE_URL, REDIS_URL })
  }

  const traces = trace ? ['node-1', 'node-2', 'node-3'].map((tag) => traceFile(shared, tag)) : undefined
  const oneNode = await alternate(single, { servers: [first], world, dir: shared, traces: traces?.slice(0, 1) })
  loads.push(loadAverage())
  const nodes = await nodesUpTo(3, shared)
  const threeNodes = await alternate(single, { servers: nodes, world, dir: shared, traces })
  loads.push(loadAverage())

  const alone = [...oneNode.alone, ...threeNodes.alone]
  const of = {
    lobby: (f: Figures) => f.lobby,
    me: (f: Figures) => f.me,
    p50: (f: Figures) => f.fan.p50,
    p99: (f: Figures) => f.fan.p99,
  }
  const fig = (fs: Figures[], get: (f: Figures) => number, digits: number) => median(fs.map(get)).toFixed(digits)
  const ratio = (p: Paired, get: (f: Figures) => number) =>
    median(p.cluster.map((f, i) => get(f) / get(p.alone[i]))).toFixed(2)
  const threeOverOne = median(threeNodes.cluster.map(of.p99)) / median(oneNode.cluster.map(of.p99))
  const row = (what: string, p: Paired, overOne: string) =>
    `| ${what} | ${fig(p.cluster, of.lobby, 0)} (${ratio(p, of.lobby)}) | ${fig(p.cluster, of.me, 0)} (${ratio(p, of.me)}) | ${fig(p.cluster, of.p50, 2)} / ${fig(p.cluster, of.p99, 2)} (${ratio(p, of.p99)}×) | ${overOne} |`
  console.log(`
| servers (on CPU ${SERVER_CPU}; PostgreSQL, Redis on CPU ${storesCpu}) | GET /lobbies/{id} req/s (÷ single) | GET /users/@me req/s (÷ single) | fan-out p50 / p99 ms (p99 ÷ single) | fan-out p99 ÷ one node |
|---|---|---|---|---|
| one server, SQLite | ${fig(alone, of.lobby, 0)} (1.00) | ${fig(alone, of.me, 0)} (1.00) | ${fig(alone, of.p50, 2)} / ${fig(alone, of.p99, 2)} (1.00×) | |
${row('one node, PostgreSQL + Redis', oneNode, '1.00×')}
${row('three nodes, PostgreSQL + Redis', threeNodes, `${threeOverOne.toFixed(2)}×`)}

${rounds} rounds per cluster, each the single server then the cluster: figures are medians, ratios the median of the
rounds' ratios (the single server's row: its ${alone.length} rounds). wrk -t1, ${connections} connections split over the servers,
${seconds} s each after 1 s warm-up; fan-out: ${posts} posts (after ${warmPosts} unmeasured) one after another through the first server to 8 members'
sockets (round-robin over the servers); the last column: the medians' ratio, three nodes over one node of the cluster.
Single server by round, GET /lobbies/{id} req/s: ${alone.map((f) => f.lobby.toFixed(0)).join(', ')}; fan-out p99 ms: ${alone.map((f) => f.fan.p99.toFixed(1)).join(', ')}.
1-min load: ${loads.join(', ')}`)
}

/**
 * The write rows (bench/lib/writes.ts), then one server on PostgreSQL without Redis (no outbox, no log: its events go
 * to its own sockets) on a database of its own, for the cost of the cluster's plumbing on a write.
 */
async function writes(world: World, shared: string, databaseUrl: string): Promise<void> {
  const cpus = cpuList(process.env.BENCH_NODE_CPUS)
  const counts = (process.env.BENCH_WRITE_NODES ?? '1,2,4,8')
    .split(',')
    .map(Number)
    .filter((n) => process.env.BENCH_WRITE_NODES || n <= Math.max(1, Math.floor(m.nproc / 2)))
  const nodes = await nodesUpTo(Math.max(...counts), shared)
  if (cpus.length) for (const [i, node] of nodes.entries()) await moveTo(cpus[i % cpus.length], node.pid)
  const rows = await writeRows(nodes, world, shared, { counts, seconds, connections, databaseUrl })
  loads.push(loadAverage())

  // One server on PostgreSQL alone: a database and a world of its own.
  const { testDatabase } = await import('../tests/db/postgres')
  const database = await testDatabase()
  await database.sql.end()
  const alone = mkdtempSync(join(tmpdir(), 'lobby-bench-pg-'))
  dirs.push(alone)
  process.env.BENCH_DATABASE_URL = database.url
  const server = await startOurs(alone, { tag: 'pg-alone', env: { REDIS_URL: '' } })
  started.push(server)
  if (cpus.length) await moveTo(cpus[0], server.pid)
  const pgWorld = await seedOnline(server, alone, await seedOffline(alone, 16))
  const [, pgRow] = await writeRows([server], pgWorld, alone, {
    counts: [1],
    seconds,
    connections,
    databaseUrl: database.url,
  })
  await server.stop()
  loads.push(loadAverage())
  console.log(`
Writes: POST /lobbies/{id}/messages (Bot), nodes on ${cpus.length ? `CPUs ${process.env.BENCH_NODE_CPUS}` : `CPU ${SERVER_CPU}`}, PostgreSQL and Redis on ${storesCpu}

${writeTable(rows)}

One server on PostgreSQL without Redis (a lobby of its own): ${pgRow.total.toFixed(0)} req/s, p50 / p99 ${pgRow.perNode[0].p50Ms.toFixed(1)} / ${pgRow.perNode[0].p99Ms.toFixed(1)} ms; ${pgRow.waits
    .slice(0, 6)
    .map(([what, mean]) => `${what} ${mean.toFixed(1)}`)
    .join(', ')}

wrk -t1 per node, ${connections} connections split over the nodes, ${seconds} s each after 1 s warm-up; backends: the
database's client backends but the sampler's, by state and wait event, mean count per 50 ms sample.
1-min load: ${loads.join(', ')}`)
}

/** CPUs of a taskset-style list ("0-3,6"). */
function cpuList(list: string | undefined): string[] {
  if (!list) return []
  return list.split(',').flatMap((part) => {
    const [a, b] = part.split('-').map(Number)
    return b === undefined ? [String(a)] : Array.from({ length: b - a + 1 }, (_, i) => String(a + i))
  })
}

const m = machine()
console.log(
  `bench cluster: ${m.nproc} CPUs (${m.cpu}), Bun ${m.bun}; servers on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}, ` +
    `PostgreSQL and Redis on CPU ${storesCpu}`,
)
const loads = [loadAverage()]
const dirs: string[] = []
const started: Server[] = []
const redis = await startRedis()
await moveTo(storesCpu, redis.pid)
try {
  // The cluster: PostgreSQL and Redis (on storesCpu), its nodes (on SERVER_CPU).
  const { cluster, testDatabase } = await import('../tests/db/postgres')
  await moveTo(storesCpu, (await cluster()).pid)
  const database = await testDatabase()
  await database.sql.end()
  process.env.BENCH_DATABASE_URL = database.url
  process.env.REDIS_URL = redis.url
  const shared = mkdtempSync(join(tmpdir(), 'lobby-bench-nodes-'))
  dirs.push(shared)
  const [first] = await nodesUpTo(1, shared)
  const world = await seedOnline(first, shared, await seedOffline(shared, 16))
  if (only !== 'writes') await reads(first, world, shared)
  if (only !== 'reads') await writes(world, shared, database.url)
} finally {
  for (const s of started) await s.stop().catch(() => {})
  redis.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}
process.exit(0)
