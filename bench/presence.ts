// Presence fan-out (issue 45, part 7): a hub user with COUNT friends online (each its own socket, bench/clients/ws.ts)
// changes status with Gateway op 3 (from 10 sessions of its own: op 3 is limited to 5 per 20 s per session), and each
// round is timed from the op 3 to the last friend's PRESENCE_UPDATE; updates delivered per second over the rounds.
// Bare: the same sockets on a plain Bun WebSocket server (bench/bare/ws.ts) that publishes the same PRESENCE_UPDATE
// bytes to one topic on a POST (timed from the POST). The friendships are made through the API first.
import { join } from 'node:path'
import { startClients } from './gateway'
import { costRow, fmtMs, fmtRate, type Row, type RunContext } from './lib/report'
import { startBare, startOurs } from './lib/servers'

type Ready = { count: number; hello: string; ready: string }
type Presence = { rounds: number; p50: number; p99: number; deliveriesPerSecond: number; payload: string }

/** Run `n` calls, `width` at a time. */
async function inParallel(n: number, width: number, call: (i: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) await call(next++)
    }),
  )
}

export async function runPresence(ctx: RunContext, count: number): Promise<Row[]> {
  if (ctx.world.users.length < count + 1) throw new Error(`presence needs ${count + 1} seeded users`)
  const friends = ctx.world.users.slice(0, count)
  const hub = ctx.world.users[count]
  const rounds = Number(process.env.BENCH_PRESENCE_ROUNDS ?? 40)
  const warm = 5
  const sessions = Math.ceil((rounds + warm) / 5)
  const ours = await startOurs(ctx.dir, { tag: 'presence' })
  let o: { ready: Ready; presence: Presence }
  try {
    const put = async (token: string, id: string) => {
      const r = await fetch(`${ours.url}/api/v9/users/@me/relationships/${id}`, {
        method: 'PUT',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: '{}',
      })
      if (r.status !== 204) throw new Error(`PUT relationship answered ${r.status}: ${await r.text()}`)
    }
    await inParallel(count, 16, (i) => put(hub.token, friends[i].id))
    await inParallel(count, 16, (i) => put(friends[i].token, hub.id))
    const wsUrl = `${ours.url.replace('http', 'ws')}/gateway?v=9&encoding=json`
    const clients = await startClients(ctx, wsUrl, friends, 16)
    try {
      const ready = await clients.next<Ready>('ready')
      clients.send({ cmd: 'presence', hubUrl: wsUrl, hubToken: hub.token, sessions, rounds, warm })
      o = { ready, presence: await clients.next<Presence>('presence') }
    } finally {
      await clients.exit()
    }
  } finally {
    await ours.stop()
  }
  const specFile = join(ctx.dir, 'bare-ws-presence.json')
  await Bun.write(specFile, JSON.stringify({ hello: o.ready.hello, ready: o.ready.ready }))
  const bare = await startBare('ws.ts', specFile)
  let b: Presence
  try {
    const clients = await startClients(ctx, `${bare.url.replace('http', 'ws')}/gateway?v=9&encoding=json`, friends, 16)
    try {
      await clients.next<Ready>('ready')
      clients.send({
        cmd: 'presence',
        publishUrl: `${bare.url}/publish-body`,
        payload: o.presence.payload,
        sessions,
        rounds,
        warm,
      })
      b = await clients.next<Presence>('presence')
    } finally {
      await clients.exit()
    }
  } finally {
    await bare.stop()
  }
  return [
    costRow({
      scenario: `Presence fan-out: 1 user's status change to ${count} friends online (op 3 → last friend's PRESENCE_UPDATE)`,
      name: 'presence',
      ours: o.presence.p50,
      bare: b.p50,
      format: fmtMs,
      oursP99: o.presence.p99,
      bareP99: b.p99,
      note:
        `${o.presence.rounds} changes; updates delivered/s ours ${fmtRate(o.presence.deliveriesPerSecond)} vs bare ` +
        `${fmtRate(b.deliveriesPerSecond)}; payload ${o.presence.payload.length} B; bare: one Bun publish of the same ` +
        `bytes, timed from its POST (ours from the op 3 frame)`,
    }),
  ]
}
