// `bun run bench [SCENARIO ...]`: our server (src/main.ts, its own process, CPU 0) against bare Bun baselines
// answering the same bytes (CPU 0), loaded by wrk or a socket-client process (CPU 1), all in one run.
// `bun run bench --list` names the scenarios; `bun run bench --profile [SCENARIO ...]` writes CPU profiles of HTTP
// scenarios (default lobby-get users-me) and summarizes where the time goes.
// Settings (environment): BENCH_SECONDS (8: measured seconds per side of an HTTP row, split into BENCH_ROUNDS (3)
// alternating rounds of ours and bare; the median round is shown), BENCH_WARM_SECONDS (2), BENCH_CONNECTIONS (32),
// BENCH_LOGIN_SECONDS (30: the login row's measured seconds per side), BENCH_SERVER_CPU (0), BENCH_LOAD_CPU (1),
// BENCH_KEEP=1 keeps the temp directory (databases, logs, profiles), BENCH_DATABASE=postgres runs our server on a
// PostgreSQL server started as the tests start theirs (tests/db/postgres.ts: a temp dir, loopback, durability off).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runGateway } from './gateway'
import { runGatewaySdk } from './gateway-sdk'
import { runPresence } from './presence'
import { httpScenarios, runHttpScenario } from './http'
import { BUN, LOAD_CPU, SERVER_CPU, loadAverage, machine, pinned, requireTools } from './lib/machine'
import { render, renderLine, type Row, type RunContext } from './lib/report'
import { startOurs } from './lib/servers'
import { seedOffline, seedOnline } from './lib/world'
import { runLogin } from './login'
import { runProfile } from './profile'
import { runStartup } from './startup'

const OTHER = ['login', 'gateway', 'gateway-5000', 'gateway-sdk', 'presence', 'startup'] as const
const ALIASES: Record<string, string> = { identify: 'gateway', fanout: 'gateway', 'gateway-1000': 'gateway' }
const ALL = [...httpScenarios.map((s) => s.name), ...OTHER]

const args = process.argv.slice(2)
if (args.includes('--list')) {
  for (const s of httpScenarios) console.log(`${s.name.padEnd(22)} ${s.title}`)
  console.log(`${'login'.padEnd(22)} POST /auth/login at concurrency 8 vs raw argon2id verify`)
  console.log(
    `${'gateway'.padEnd(22)} Identify → READY, RSS per socket and lobby fan-out, 1000 sockets (aliases: identify, fanout)`,
  )
  console.log(`${'gateway-5000'.padEnd(22)} RSS per socket at 5000 identified sockets`)
  console.log(
    `${'gateway-sdk'.padEnd(22)} lobby fan-out p99: BENCH_SDK_SOCKETS (1000) SDK clients in one process vs raw sockets`,
  )
  console.log(
    `${'presence'.padEnd(22)} PRESENCE_UPDATE fan-out: one user's op 3 to 1000 friends online vs a bare publish`,
  )
  console.log(`${'startup'.padEnd(22)} exec → first /healthz, compiled binary and bun src/main.ts`)
  process.exit(0)
}

// Everything this process starts runs on the load CPU unless pinned elsewhere (servers: SERVER_CPU).
if (!process.env.BENCH_PINNED) {
  requireTools()
  const proc = Bun.spawn(pinned(LOAD_CPU, [BUN, import.meta.path, ...args]), {
    env: { ...process.env, BENCH_PINNED: '1' },
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  process.exit(await proc.exited)
}

const profileMode = args.includes('--profile')
const names = args.filter((a) => !a.startsWith('--')).map((a) => ALIASES[a] ?? a)
for (const n of names) {
  if (!ALL.includes(n)) {
    console.error(`unknown scenario "${n}"; try --list`)
    process.exit(2)
  }
}
const selected = new Set(profileMode ? [] : names.length ? names : ALL)
const profiled = profileMode ? (names.length ? names : ['lobby-get', 'users-me']) : []

const seconds = Number(process.env.BENCH_SECONDS ?? 8)
const warmSeconds = Number(process.env.BENCH_WARM_SECONDS ?? 2)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 32)
const dir = mkdtempSync(join(tmpdir(), 'lobby-bench-'))
// The Gateway scenarios hold 2N sockets, each its own user (bench/gateway.ts).
const sdkSockets = Number(process.env.BENCH_SDK_SOCKETS ?? 1000)
const userCount = selected.has('gateway-5000')
  ? 10000
  : selected.has('gateway')
    ? 2000
    : selected.has('gateway-sdk') || selected.has('presence')
      ? Math.max(1001, sdkSockets)
      : 8
const m = machine()
const started = performance.now()

console.log(`bench: ${m.nproc} CPUs (${m.cpu}), Bun ${m.bun}; server on CPU ${SERVER_CPU}, load on CPU ${LOAD_CPU}`)
console.log(
  `wrk -t1 -c${connections}, ${rounds} alternating rounds of ${Math.max(1, Math.round(seconds / rounds))} s per side after a ${warmSeconds} s warm-up (login: -c8); temp dir ${dir}`,
)
console.log(`seeding ${userCount} users…`)

const rows: Row[] = []
const loads: string[] = [loadAverage()]
const add = (...more: Row[]) => {
  for (const r of more) {
    rows.push(r)
    console.log(renderLine(r))
  }
  loads.push(loadAverage())
}

/** A scenario that fails becomes a row saying why; the others still run. */
async function attempt(name: string, title: string, fn: () => Promise<Row | Row[]>): Promise<void> {
  try {
    const result = await fn()
    add(...(Array.isArray(result) ? result : [result]))
  } catch (error) {
    add({
      scenario: title,
      name,
      skipped: `failed: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300),
    })
  }
}

/** The PostgreSQL server started for BENCH_DATABASE=postgres: stopped at the end (its watchdog would keep us alive). */
let stopPostgres: (() => void) | undefined
if (process.env.BENCH_DATABASE === 'postgres') {
  const { cluster, testDatabase } = await import('../tests/db/postgres')
  const database = await testDatabase()
  await database.sql.end()
  stopPostgres = (await cluster()).stop
  process.env.BENCH_DATABASE_URL = database.url
  console.log(`on PostgreSQL: ${database.url}`)
}

try {
  const offline = await seedOffline(dir, userCount)
  const ours = await startOurs(dir, { tag: 'http' })
  let ctx!: RunContext
  try {
    const world = await seedOnline(ours, dir, offline)
    ctx = { dir, world, seconds, warmSeconds, connections, rounds }
    for (const scenario of httpScenarios) {
      if (selected.has(scenario.name))
        await attempt(scenario.name, scenario.title, () => runHttpScenario(ctx, ours, scenario))
    }
    if (selected.has('login')) await attempt('login', 'POST /auth/login', () => runLogin(ctx, ours))
  } finally {
    await ours.stop()
  }
  if (selected.has('gateway')) await attempt('gateway', 'Gateway, 1000 sockets', () => runGateway(ctx, 1000))
  if (selected.has('gateway-5000')) await attempt('gateway-5000', 'Gateway, 5000 sockets', () => runGateway(ctx, 5000))
  if (selected.has('gateway-sdk'))
    await attempt('gateway-sdk', 'Gateway through the SDK', () => runGatewaySdk(ctx, sdkSockets))
  if (selected.has('presence'))
    await attempt('presence', 'Presence fan-out', () => runPresence(ctx, Math.min(1000, ctx.world.users.length - 1)))
  if (selected.has('startup')) await attempt('startup', 'Start-up', () => runStartup(ctx))
  const profiles: string[] = []
  for (const name of profiled) profiles.push(await runProfile(ctx, name))

  console.log('')
  console.log(
    `Machine: ${m.nproc} CPUs, ${m.cpu}, Linux ${m.kernel}, Bun ${m.bun}, ${m.date}; took ${((performance.now() - started) / 1000).toFixed(0)} s; 1-min load average during the run: ${loads.join(', ')}`,
  )
  if (rows.length) console.log(`\n${render(rows)}`)
  for (const p of profiles) console.log(`\n${p}`)
} finally {
  stopPostgres?.()
  if (process.env.BENCH_KEEP || profileMode) console.log(`\nkept ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
