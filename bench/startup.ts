// Start-up: time from exec to the first /healthz 200, on an existing database (the bench's, already migrated and
// seeded), for the compiled binary (`bun run build`) and for `bun src/main.ts`; baselines: a bare Bun.serve
// answering /healthz, compiled and from source. The server runs on SERVER_CPU, this poller on LOAD_CPU.
import { join } from 'node:path'
import { BUN, ROOT, SERVER_CPU, freePort, median, pinned } from './lib/machine'
import { costRow, fmtMs, type Row, type RunContext } from './lib/report'
import { ourEnv } from './lib/servers'

const RUNS = 10

async function timeToHealthz(cmd: string[], env: Record<string, string>, port: number): Promise<number> {
  const url = `http://127.0.0.1:${port}/healthz`
  const t0 = performance.now()
  const proc = Bun.spawn(pinned(SERVER_CPU, cmd), {
    cwd: ROOT,
    env: { ...env, PORT: String(port) },
    stdout: 'ignore',
    stderr: 'ignore',
  })
  try {
    for (;;) {
      try {
        const r = await fetch(url)
        await r.arrayBuffer()
        if (r.status === 200) return performance.now() - t0
      } catch {}
      if (proc.exitCode !== null) throw new Error(`${cmd.join(' ')} exited with ${proc.exitCode}`)
      if (performance.now() - t0 > 20_000) throw new Error(`${cmd.join(' ')}: no /healthz within 20 s`)
      await Bun.sleep(1)
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}

async function series(cmd: string[], env: Record<string, string>): Promise<number[]> {
  const port = freePort()
  await timeToHealthz(cmd, env, port) // page cache, first-run effects
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) times.push(await timeToHealthz(cmd, env, port))
  return times
}

function build(entry: string, outfile: string, viaScript: boolean): void {
  const cmd = viaScript
    ? [BUN, 'run', 'scripts/build.ts', outfile]
    : [BUN, 'build', entry, '--compile', '--minify-whitespace', '--minify-syntax', '--outfile', outfile]
  const proc = Bun.spawnSync(cmd, { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
  if (proc.exitCode !== 0) throw new Error(`build ${entry}: ${proc.stderr.toString()}`)
}

export async function runStartup(ctx: RunContext): Promise<Row[]> {
  const binary = join(ctx.dir, 'server')
  const bareBinary = join(ctx.dir, 'bare-healthz')
  build('src/main.ts', binary, true)
  build('bench/bare/healthz.ts', bareBinary, false)
  const env = ourEnv(ctx.dir, 0)
  const ours = await series([binary], env)
  const bare = await series([bareBinary], env)
  const oursSource = await series([BUN, 'src/main.ts'], env)
  const bareSource = await series([BUN, 'bench/bare/healthz.ts'], env)
  const spread = (t: number[]) => `runs ${fmtMs(Math.min(...t))}–${fmtMs(Math.max(...t))}`
  return [
    costRow({
      scenario: 'Compiled binary: exec → first /healthz 200 (existing database)',
      name: 'startup',
      ours: median(ours),
      bare: median(bare),
      format: (ms) => `${fmtMs(ms)} median`,
      target: { max: 150, label: '< 150 ms' },
      note: `${RUNS} runs; ours ${spread(ours)}; bare: compiled Bun.serve answering /healthz`,
    }),
    costRow({
      scenario: '`bun src/main.ts`: exec → first /healthz 200',
      name: 'startup',
      ours: median(oursSource),
      bare: median(bareSource),
      format: (ms) => `${fmtMs(ms)} median`,
      note: `${RUNS} runs; ours ${spread(oursSource)}; bare: \`bun\` running a Bun.serve answering /healthz`,
    }),
  ]
}
