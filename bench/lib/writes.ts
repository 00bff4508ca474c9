// The cluster's write rows (issue 42): lobby-message POSTs through 1, 2, 4 and 8 nodes (as many as the machine has
// the cores for), first all to one lobby every node shares (one hot topic), then each node to a lobby of its own
// (topics apart): requests a second in all and per node, p50/p99 per node, and what PostgreSQL's backends were
// waiting on meanwhile (pg_stat_activity sampled every 50 ms: its wait_event_type/wait_event, or its state).
import postgres from 'postgres'
import { partitionOf } from '../../src/cluster/outbox'
import type { Server } from './servers'
import type { World } from './world'
import { type Request, type WrkResult, wrk } from './wrk'

export type WriteRow = {
  nodes: number
  lobbies: 'shared' | 'per node'
  total: number
  perNode: WrkResult[]
  /** What the database's other backends did, by `type:event` (and state), averaged over the samples. */
  waits: [what: string, mean: number][]
  samples: number
}

async function createLobby(server: Server, bot: string): Promise<string> {
  const r = await fetch(`${server.url}/api/v9/lobbies`, {
    method: 'POST',
    headers: { authorization: bot, 'content-type': 'application/json' },
    body: '{}',
  })
  if (r.status !== 200 && r.status !== 201) throw new Error(`create lobby: ${r.status} ${await r.text()}`)
  return ((await r.json()) as { id: string }).id
}

const post = (world: World, lobby: string): Request => ({
  method: 'POST',
  path: `/api/v9/lobbies/${lobby}/messages`,
  headers: { authorization: world.bot, 'content-type': 'application/json' },
  body: JSON.stringify({ content: 'gg, next round on harbor?', metadata: { kind: 'chat' } }),
})

/** pg_stat_activity every `everyMs` until stopped: the mean count of backends per wait event (or state). */
function sampleWaits(url: string, everyMs = 50) {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const counts = new Map<string, number>()
  let samples = 0
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const rows = await sql<{ what: string; n: number }[]>`
        SELECT coalesce(state, '?') || coalesce(' ' || wait_event_type || ':' || wait_event, '') AS what, count(*)::int AS n
        FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
        GROUP BY 1`
      samples += 1
      for (const r of rows) counts.set(r.what, (counts.get(r.what) ?? 0) + r.n)
      await Bun.sleep(everyMs)
    }
  })()
  return {
    async stop(): Promise<{ waits: [string, number][]; samples: number }> {
      stopped = true
      await loop
      await sql.end()
      const waits = [...counts]
        .map(([what, n]) => [what, n / Math.max(1, samples)] as [string, number])
        .sort((a, b) => b[1] - a[1])
      return { waits, samples }
    },
  }
}

/**
 * The write rows over `servers` (the first `n` of them for each n in `counts`): every node's wrk at once, the
 * connections split over them, `seconds` each after a second of warm-up.
 */
export async function writeRows(
  servers: Server[],
  world: World,
  dir: string,
  {
    counts,
    seconds,
    connections,
    databaseUrl,
  }: { counts: number[]; seconds: number; connections: number; databaseUrl: string },
): Promise<WriteRow[]> {
  const shared = await createLobby(servers[0], world.bot)
  // A lobby per node, each in an outbox partition of its own (and not the shared one's): topics apart.
  const own: string[] = []
  const taken = new Set([partitionOf(`lobby:${shared}`)])
  while (own.length < servers.length) {
    const id = await createLobby(servers[0], world.bot)
    if (taken.has(partitionOf(`lobby:${id}`))) continue
    taken.add(partitionOf(`lobby:${id}`))
    own.push(id)
  }
  const rows: WriteRow[] = []
  for (const n of counts) {
    const nodes = servers.slice(0, n)
    const per = Math.max(1, Math.round(connections / n))
    for (const lobbies of ['shared', 'per node'] as const) {
      const requestOf = (i: number) => post(world, lobbies === 'shared' ? shared : own[i])
      await Promise.all(
        nodes.map((s, i) => wrk(s.url, requestOf(i), { seconds: 1, connections: per, threads: 1 }, dir)),
      )
      const sampler = sampleWaits(databaseUrl)
      const perNode = await Promise.all(
        nodes.map((s, i) => wrk(s.url, requestOf(i), { seconds, connections: per, threads: 1 }, dir)),
      )
      const { waits, samples } = await sampler.stop()
      for (const r of perNode) if (r.errors || r.non2xx) throw new Error(`wrk: ${r.errors} errors, ${r.non2xx} non-2xx`)
      rows.push({ nodes: n, lobbies, total: perNode.reduce((sum, r) => sum + r.rps, 0), perNode, waits, samples })
    }
  }
  return rows
}

export function writeTable(rows: WriteRow[]): string {
  const waits = (row: WriteRow) =>
    row.waits
      .slice(0, 6)
      .map(([what, mean]) => `${what} ${mean.toFixed(1)}`)
      .join(', ')
  return [
    '| nodes | lobbies | POST req/s in all | per node req/s | per node p50 / p99 ms | PostgreSQL backends (mean per sample) |',
    '|---|---|---:|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.nodes} | ${r.lobbies} | ${r.total.toFixed(0)} | ${r.perNode.map((p) => p.rps.toFixed(0)).join(', ')} | ${r.perNode.map((p) => `${p.p50Ms.toFixed(1)} / ${p.p99Ms.toFixed(1)}`).join(', ')} | ${waits(r)} (${r.samples} samples) |`,
    ),
  ].join('\n')
}
