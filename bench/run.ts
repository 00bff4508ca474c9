// Benchmarks: each target is measured against a bare Bun.serve baseline in the same run, and printed as a ratio.
// Servers run in their own processes; this process is the load generator (keep-alive fetch, fixed concurrency).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const DURATION_MS = Number(process.env.BENCH_MS ?? 3000)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)

async function load(url: string, headers: Record<string, string> = {}): Promise<{ rps: number; p99: number }> {
  const latencies: number[] = []
  const end = performance.now() + DURATION_MS
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        const t = performance.now()
        const r = await fetch(url, { headers })
        await r.arrayBuffer()
        if (r.status >= 500) throw new Error(`${url} answered ${r.status}`)
        latencies.push(performance.now() - t)
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  return { rps: latencies.length / (DURATION_MS / 1000), p99: latencies[Math.floor(latencies.length * 0.99)] }
}

async function spawn(cmd: string[], env: Record<string, string>): Promise<{ url: string; stop: () => void }> {
  const proc = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let seen = ''
  while (!/(listening url=|baseline )(\S+)/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`exited: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { url: /(?:listening url=|baseline )(\S+)/.exec(seen)![1], stop: () => proc.kill() }
}

const dir = mkdtempSync(join(tmpdir(), 'bench-'))
const dbPath = join(dir, 'bench.sqlite')
// One token hammering one route would be answered 429 by the per-route limits: measure with the headers but no refusals.
const env = { DATABASE_PATH: dbPath, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ROUTE_RATE_LIMITS: 'false' }

const user = JSON.parse(
  Bun.spawnSync([process.execPath, 'run', 'src/main.ts', 'user', 'create', '--email', 'bench@example.test', '--password', 'bench password 123'], {
    env: { ...process.env, ...env },
  }).stdout.toString(),
)

const baseline = await spawn([process.execPath, 'run', 'bench/baseline.ts'], {})
const ours = await spawn([process.execPath, 'run', 'src/main.ts'], env)

const rows: [string, string, Record<string, string>][] = [
  ['GET /healthz', `${ours.url}/healthz`, {}],
  ['GET /api/v9/users/@me (token lookup + JSON)', `${ours.url}/api/v9/users/@me`, { authorization: user.token }],
  ['GET unknown route (404 body)', `${ours.url}/api/v9/nope`, {}],
]

await load(`${baseline.url}/`) // warm-up
const base = await load(`${baseline.url}/`)
console.log(`baseline bare Bun.serve JSON: ${base.rps.toFixed(0)} req/s, p99 ${base.p99.toFixed(2)} ms (concurrency ${CONCURRENCY}, ${DURATION_MS} ms)`)
for (const [name, url, headers] of rows) {
  await load(url, headers)
  const r = await load(url, headers)
  console.log(`${name}: ${r.rps.toFixed(0)} req/s = ${(r.rps / base.rps).toFixed(2)}x baseline, p99 ${r.p99.toFixed(2)} ms`)
}
baseline.stop()
ours.stop()
