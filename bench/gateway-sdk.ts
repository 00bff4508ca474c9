// The game client SDK's Gateway against raw WebSocket clients, in one run on one server: COUNT clients of each
// (bench/clients/sdk.ts: a Client each, in one process; bench/clients/ws.ts: bare sockets), the same users, in the
// fan-out lobby; a lobby message posted by the application timed from the POST to the last client's event. The
// issue's bar: the SDK's p99 within 1.3x of the raw clients'. The raw side runs first, then the SDK's, then the raw
// side again (its better p99 of the two is the baseline, so a warming server does not flatter the SDK).
import { costRow, fmtMs, type Row, type RunContext } from './lib/report'
import { startOurs } from './lib/servers'
import { type Clients, startClients } from './gateway'

type Fanout = { rounds: number; p50: number; p99: number; payload: string }
type Ready = { count: number; rate: number; p50: number; p99: number }

async function fanout(clients: Clients, url: string, authorization: string, rounds: number): Promise<Fanout> {
  clients.send({ cmd: 'fanout', url, authorization, rounds, warm: 5 })
  return clients.next<Fanout>('fanout')
}

export async function runGatewaySdk(ctx: RunContext, count: number): Promise<Row[]> {
  if (ctx.world.users.length < count) throw new Error(`gateway-sdk needs ${count} seeded users`)
  const users = ctx.world.users.slice(0, Math.min(count, 1000))
  const rounds = Number(process.env.BENCH_SDK_ROUNDS ?? 40)
  const ours = await startOurs(ctx.dir, { tag: 'gateway-sdk' })
  try {
    const url = `${ours.url}/api/v9/lobbies/${ctx.world.fanoutLobby.id}/messages`
    const run = async (script: string, target: string) => {
      const clients = await startClients(ctx, target, users, 16, script)
      try {
        const ready = await clients.next<Ready>('ready')
        return { ready, fan: await fanout(clients, url, ctx.world.bot, rounds) }
      } finally {
        await clients.exit()
      }
    }
    const wsUrl = `${ours.url.replace('http', 'ws')}/gateway?v=9&encoding=json`
    const raw1 = await run('bench/clients/ws.ts', wsUrl)
    const sdk = await run('bench/clients/sdk.ts', ours.url)
    const raw2 = await run('bench/clients/ws.ts', wsUrl)
    const raw = raw1.fan.p99 <= raw2.fan.p99 ? raw1 : raw2
    return [
      costRow({
        scenario: `Lobby fan-out to ${users.length} SDK Gateway clients in one process (POST → last client's event)`,
        name: 'gateway-sdk',
        ours: sdk.fan.p99,
        bare: raw.fan.p99,
        format: (ms) => `${fmtMs(ms)} p99`,
        oursP99: sdk.fan.p99,
        bareP99: raw.fan.p99,
        target: { max: raw.fan.p99 * 1.3, label: '≤ 1.3× raw p99' },
        note:
          `"bare" here: raw WebSocket clients (bench/clients/ws.ts), the better of two runs around the SDK's; ` +
          `p50 SDK ${fmtMs(sdk.fan.p50)} vs raw ${fmtMs(raw.fan.p50)}; ${rounds} posts each; connect→READY p99 ` +
          `SDK ${fmtMs(sdk.ready.p99)} vs raw ${fmtMs(raw.ready.p99)}; SDK without zlib-stream unless BENCH_SDK_COMPRESS=1`,
      }),
    ]
  } finally {
    await ours.stop()
  }
}
