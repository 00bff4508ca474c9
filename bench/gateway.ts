// Gateway: identified sockets held by a client process on the load CPU (bench/clients/ws.ts), against our server
// (fresh process each time, so RSS deltas are the sockets' own) and against a bare Bun WebSocket server that
// answers our Hello and READY bytes and publishes our fan-out bytes (bench/bare/ws.ts).
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { BUN, LOAD_CPU, ROOT, pinned, sleep } from './lib/machine'
import { costRow, fmtMs, ratioRow, type Row, type RunContext } from './lib/report'
import type { User } from './lib/world'
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

export class Clients {
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

/**
 * A client process holding one identified socket per user of `from` (its own token each): raw WebSockets
 * (bench/clients/ws.ts), or another client with the same commands (`script`: bench/clients/sdk.ts, the SDK's).
 */
export async function startClients(
  ctx: RunContext,
  wsUrl: string,
  from: User[],
  concurrency: number,
  script = 'bench/clients/ws.ts',
): Promise<Clients> {
  const file = join(ctx.dir, `tokens-${from[0].id}-${from.length}.json`)
  await Bun.write(file, JSON.stringify(from.map((u) => u.token)))
  const proc = Bun.spawn(
    pinned(LOAD_CPU, [BUN, join(ROOT, script), wsUrl, file, String(from.length), String(concurrency)]),
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
  /** (RSS with 2N sockets − RSS with the first N) / N: what N more sockets cost */
  rssPerSocketKb: number
  /** (RSS with the first N − RSS after the warm-up) / N: includes what the process grows once (see holdSockets) */
  rssFirstPerSocketKb: number
  rssFreshKb: number
  rssBeforeKb: number
  rssFirstKb: number
  rssAfterKb: number
  fanout?: FanoutEvent
}

/**
 * Against `server`: a warm-up, then N identified sockets held (users N..2N-1), then N more (users 0..N-1, the fan-out
 * lobby's members for N = 1000), RSS read 5 s after each; optionally a fan-out timed on the second N.
 *
 * Per socket is what the second N add. The first N also pay for what the process grows once, whatever the count:
 * SQLite's page cache filling to its bound (2 MB) with the rows the identifies read, and the JavaScript heap's room to
 * collect in, which JSC sizes in proportion to the whole heap (~10 MB before any socket); measured, that was ~8 MB, so
 * "first N / N" read 13–16 KB at 1000 sockets and 7.5 KB at 5000 for the same build (bench/RESULTS.md issue 26).
 */
async function holdSockets(
  ctx: RunContext,
  server: Server,
  wsUrl: string,
  count: number,
  fanout?: { url: string; authorization: string },
): Promise<Side> {
  const users = ctx.world.users
  const concurrency = count >= 5000 ? 32 : 16
  // Warm-up: 100 sockets identify and leave (close 1000 ends their sessions), so code paths are compiled and
  // first-use caches filled before the baseline RSS is read.
  await sleep(1500)
  const fresh = server.rssKb()
  const warm = await startClients(ctx, wsUrl, users.slice(0, 100), 16)
  await warm.next<ReadyEvent>('ready')
  await warm.exit()
  await sleep(1500)
  const before = server.rssKb()
  // The bare server subscribes these to another topic than the fan-out's (its URL says which); ours ignores the field.
  const first = await startClients(ctx, `${wsUrl}&bench=base`, users.slice(count, 2 * count), concurrency)
  try {
    await first.next<ReadyEvent>('ready')
    await sleep(SETTLE_MS)
    const held = server.rssKb()
    const clients = await startClients(ctx, wsUrl, users.slice(0, count), concurrency)
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
        rssPerSocketKb: (after - held) / count,
        rssFirstPerSocketKb: (held - before) / count,
        rssFreshKb: fresh,
        rssBeforeKb: before,
        rssFirstKb: held,
        rssAfterKb: after,
        fanout: fan,
      }
    } finally {
      await clients.exit()
    }
  } finally {
    await first.exit()
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
  if (limit < 2 * count + 200) {
    const reason = `ulimit -n is ${limit}; ${2 * count} sockets need more (raise it: ulimit -n ${count * 4 + 1000})`
    return [{ scenario: `Gateway, ${count} identified sockets`, name: `gateway-${count}`, skipped: reason }]
  }
  if (ctx.world.users.length < 2 * count) throw new Error(`gateway-${count} needs ${2 * count} seeded users`)
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
        scenario: `Identify → READY (${count} sockets on a server holding ${count}, 16 in flight)`,
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
      scenario: `Idle identified gateway connection (${count} sockets, each in a lobby, on a server holding ${count})`,
      name: `gateway-${count}`,
      ours: o.rssPerSocketKb,
      bare: b.rssPerSocketKb,
      format: kb,
      target: count === 1000 ? { max: 12, label: '≤ 12 KB' } : { max: 20, label: '≤ 20 KB' },
      note:
        `server RSS delta / sockets, read ${SETTLE_MS / 1000} s after the last READY, the first ${count} held; ` +
        `RSS ours ${mb(o.rssFreshKb)} fresh, ${mb(o.rssBeforeKb)} warm, ${mb(o.rssFirstKb)} → ${mb(o.rssAfterKb)}, bare ${mb(b.rssFreshKb)}, ${mb(b.rssBeforeKb)}, ${mb(b.rssFirstKb)} → ${mb(b.rssAfterKb)}; ` +
        `the first ${count} after a 100-socket warm-up (with what the process grows once): ours ${kb(o.rssFirstPerSocketKb)}, bare ${kb(b.rssFirstPerSocketKb)}`,
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
