// Gateway: identified sockets held by a client process on the load CPU (bench/clients/ws.ts), against our server
// (fresh process each time, so RSS deltas are the sockets' own) and against a bare Bun WebSocket server that
// answers our Hello and READY bytes and publishes our fan-out bytes (bench/bare/ws.ts).
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { BUN, LOAD_CPU, ROOT, pinned, sleep } from './lib/machine'
import { costRow, fmtMs, ratioRow, type Row, type RunContext } from './lib/report'
import { startBare, startOurs, type Captured, type Server } from './lib/servers'

/** Time for the heap to settle after the last identify before RSS is read. */
const SETTLE_MS = 5000

type ReadyEvent = {
  count: number
  seconds: number
  rate: number
  p50: number
  p99: number
  hello: string
  ready: string
}
type FanoutEvent = { rounds: number; p50: number; p99: number; payload: string; post: Captured }

class Clients {
  private lines: AsyncIterator<string>
  constructor(private proc: Subprocess<'pipe', 'pipe', 'inherit'>) {
    this.lines = readLines(proc.stdout)
  }

  async next<T>(event: string): Promise<T> {
    for (;;) {
      const { value, done } = await this.lines.next()
      if (done) throw new Error(`socket clients exited (${await this.proc.exited}) before "${event}"`)
      const parsed = JSON.parse(value) as { event: string; message?: string }
      if (parsed.event === 'error') throw new Error(`socket clients: ${parsed.message}`)
      if (parsed.event === event) return parsed as T
    }
  }

  send(cmd: Record<string, unknown>): void {
    this.proc.stdin.write(JSON.stringify(cmd) + '\n')
    this.proc.stdin.flush()
  }

  async exit(): Promise<void> {
    this.send({ cmd: 'exit' })
    await Promise.race([this.proc.exited, sleep(10_000)])
    this.proc.kill('SIGKILL')
  }
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true })
    let i: number
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i).trim()
      buffer = buffer.slice(i + 1)
      if (line) yield line
    }
  }
}

async function startClients(ctx: RunContext, wsUrl: string, count: number, concurrency: number): Promise<Clients> {
  const file = join(ctx.dir, `tokens-${count}.json`)
  await Bun.write(file, JSON.stringify(ctx.world.users.slice(0, count).map((u) => u.token)))
  const proc = Bun.spawn(
    pinned(LOAD_CPU, [BUN, join(ROOT, 'bench/clients/ws.ts'), wsUrl, file, String(count), String(concurrency)]),
    {
      cwd: ROOT,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'inherit',
    },
  )
  return new Clients(proc)
}

type Side = {
  ready: ReadyEvent
  /** (RSS with the sockets − RSS after the warm-up) / sockets */
  rssPerSocketKb: number
  /** the same from the fresh process's RSS, before the warm-up: includes first-use costs (compiled code, caches) */
  rssPerSocketColdKb: number
  rssFreshKb: number
  rssBeforeKb: number
  rssAfterKb: number
  fanout?: FanoutEvent
}

/** Open `count` identified sockets against `server`, read its RSS before and after, optionally time a fan-out. */
async function holdSockets(
  ctx: RunContext,
  server: Server,
  wsUrl: string,
  count: number,
  fanout?: { url: string; authorization: string },
): Promise<Side> {
  // Warm-up: 100 sockets identify and leave (close 1000 ends their sessions), so code paths are compiled and
  // first-use caches filled before the baseline RSS is read; the delta is then the sockets' own.
  await sleep(1500)
  const fresh = server.rssKb()
  const warm = await startClients(ctx, wsUrl, 100, 16)
  await warm.next<ReadyEvent>('ready')
  await warm.exit()
  await sleep(1500)
  const before = server.rssKb()
  const clients = await startClients(ctx, wsUrl, count, count >= 5000 ? 32 : 16)
  try {
    const ready = await clients.next<ReadyEvent>('ready')
    await sleep(SETTLE_MS)
    const after = server.rssKb()
    let fan: FanoutEvent | undefined
    if (fanout) {
      clients.send({ cmd: 'fanout', url: fanout.url, authorization: fanout.authorization, rounds: 40, warm: 5 })
      fan = await clients.next<FanoutEvent>('fanout')
    }
    return {
      ready,
      rssPerSocketKb: (after - before) / count,
      rssPerSocketColdKb: (after - fresh) / count,
      rssFreshKb: fresh,
      rssBeforeKb: before,
      rssAfterKb: after,
      fanout: fan,
    }
  } finally {
    await clients.exit()
  }
}

function ulimitNoFile(): number {
  const out = Bun.spawnSync(['sh', '-c', 'ulimit -n']).stdout.toString().trim()
  return out === 'unlimited' ? Infinity : Number(out)
}

const kb = (n: number) => `${n.toFixed(1)} KB/socket`
const mb = (k: number) => `${(k / 1024).toFixed(0)} MB`

export async function runGateway(ctx: RunContext, count: number): Promise<Row[]> {
  const limit = ulimitNoFile()
  if (limit < count + 200) {
    const reason = `ulimit -n is ${limit}; ${count} sockets need more (raise it: ulimit -n ${count * 2 + 1000})`
    return [{ scenario: `Gateway, ${count} identified sockets`, name: `gateway-${count}`, skipped: reason }]
  }
  if (ctx.world.users.length < count) throw new Error(`gateway-${count} needs ${count} seeded users`)
  const withFanout = count === 1000

  // Ours: a fresh process, so the RSS delta is the sockets' own.
  const ours = await startOurs(ctx.dir, { tag: `gateway-${count}` })
  let o: Side
  try {
    o = await holdSockets(
      ctx,
      ours,
      `${ours.url.replace('http', 'ws')}/gateway?v=9&encoding=json`,
      count,
      withFanout
        ? { url: `${ours.url}/api/v9/lobbies/${ctx.world.fanoutLobby.id}/messages`, authorization: ctx.world.bot }
        : undefined,
    )
  } finally {
    await ours.stop()
  }

  const specFile = join(ctx.dir, `bare-ws-${count}.json`)
  await Bun.write(
    specFile,
    JSON.stringify({ hello: o.ready.hello, ready: o.ready.ready, payload: o.fanout?.payload, post: o.fanout?.post }),
  )
  const bare = await startBare('ws.ts', specFile)
  let b: Side
  try {
    b = await holdSockets(
      ctx,
      bare,
      `${bare.url.replace('http', 'ws')}/gateway?v=9&encoding=json`,
      count,
      withFanout ? { url: `${bare.url}/publish`, authorization: ctx.world.bot } : undefined,
    )
  } finally {
    await bare.stop()
  }

  const rows: Row[] = []
  if (withFanout) {
    rows.push(
      ratioRow({
        scenario: `Identify → READY (${count} sockets, 16 in flight)`,
        name: 'identify',
        ours: o.ready.rate,
        bare: b.ready.rate,
        unit: 'identifies/s',
        oursP99: o.ready.p99,
        bareP99: b.ready.p99,
        note: `READY ${o.ready.ready.length} B; identify→READY p50 ${fmtMs(o.ready.p50)} vs ${fmtMs(b.ready.p50)}`,
      }),
    )
  }
  rows.push(
    costRow({
      scenario: `Idle identified gateway connection (${count} sockets)`,
      name: `gateway-${count}`,
      ours: o.rssPerSocketKb,
      bare: b.rssPerSocketKb,
      format: kb,
      target: { max: 20, label: '≤ 20 KB' },
      note:
        `server RSS delta / sockets after a 100-socket warm-up, read ${SETTLE_MS / 1000} s after the last READY; ` +
        `RSS ours ${mb(o.rssFreshKb)} fresh, ${mb(o.rssBeforeKb)} warm → ${mb(o.rssAfterKb)}, bare ${mb(b.rssFreshKb)}, ${mb(b.rssBeforeKb)} → ${mb(b.rssAfterKb)}; ` +
        `from the fresh process (first-use costs included): ours ${kb(o.rssPerSocketColdKb)}, bare ${kb(b.rssPerSocketColdKb)}`,
    }),
  )
  if (withFanout && o.fanout && b.fanout) {
    rows.push(
      costRow({
        scenario: 'Lobby message fan-out to 1000 members (POST → last socket)',
        name: 'fanout',
        ours: o.fanout.p50,
        bare: b.fanout.p50,
        format: (ms) => `${fmtMs(ms)} p50`,
        oursP99: o.fanout.p99,
        bareP99: b.fanout.p99,
        note: `${o.fanout.rounds} posts; payload ${o.fanout.payload.length} B; bare: one Bun publish of the same bytes`,
      }),
    )
  }
  return rows
}
