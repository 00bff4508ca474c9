// The processes under test: our server (the real entry, src/main.ts) and the bare Bun baselines, each pinned to
// SERVER_CPU, each in its own process.
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { BUN, ROOT, SERVER_CPU, freePort, pinned, rssKb, waitForHealth } from './machine'

export type Server = { url: string; port: number; pid: number; rssKb(): number; stop(): Promise<void> }

async function stopProcess(proc: Subprocess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  proc.kill('SIGTERM')
  const done = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)])
  if (!done) {
    proc.kill('SIGKILL')
    await proc.exited
  }
}

/** Environment of our server in the bench: what a user runs (LOG_LEVEL info, request log on), on a temp database. */
export function ourEnv(dir: string, port: number): Record<string, string> {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v
  for (const k of ['BASE_URL', 'WEB_URL', 'SMTP_URL', 'SMS_WEBHOOK_URL', 'TRUST_PROXY', 'NODE_ENV']) delete env[k]
  return {
    ...env,
    DATABASE_PATH: join(dir, 'bench.sqlite'),
    // BENCH_DATABASE=postgres (bench/run.ts): the rows on the PostgreSQL server it started.
    ...(process.env.BENCH_DATABASE_URL ? { DATABASE_URL: process.env.BENCH_DATABASE_URL } : {}),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    ROUTE_RATE_LIMITS: 'false',
  }
}

/**
 * Our server: `bun src/main.ts` pinned to SERVER_CPU, stdout (the request log) to a file, as an operator runs it.
 * `bunFlags` go before the script (e.g. --cpu-prof).
 */
export async function startOurs(
  dir: string,
  options: { bunFlags?: string[]; tag?: string; env?: Record<string, string> } = {},
): Promise<Server> {
  const port = freePort()
  const tag = options.tag ?? 'server'
  const proc = Bun.spawn(pinned(SERVER_CPU, [BUN, ...(options.bunFlags ?? []), 'src/main.ts']), {
    cwd: ROOT,
    env: { ...ourEnv(dir, port), ...options.env },
    stdout: Bun.file(join(dir, `${tag}.log`)),
    stderr: Bun.file(join(dir, `${tag}.err`)),
  })
  const url = `http://127.0.0.1:${port}`
  try {
    await Promise.race([
      waitForHealth(url),
      proc.exited.then((code) => Promise.reject(new Error(`our server exited with ${code}; see ${dir}/${tag}.err`))),
    ])
  } catch (error) {
    proc.kill('SIGKILL')
    throw error
  }
  return { url, port, pid: proc.pid, rssKb: () => rssKb(proc.pid), stop: () => stopProcess(proc) }
}

/** A bare baseline: one of bench/bare/*.ts, given a JSON spec file; it prints `port N` once listening. */
export async function startBare(script: string, specFile: string): Promise<Server> {
  const proc = Bun.spawn(pinned(SERVER_CPU, [BUN, join(ROOT, 'bench/bare', script), specFile]), {
    cwd: ROOT,
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = proc.stdout.getReader()
  let seen = ''
  while (!/port (\d+)/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`bare ${script} exited: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  const port = Number(/port (\d+)/.exec(seen)![1])
  // Printed after Bun.serve returned: it listens.
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    pid: proc.pid,
    rssKb: () => rssKb(proc.pid),
    stop: () => stopProcess(proc),
  }
}

/** What a response looked like, to be answered again byte for byte by a bare server. */
export type Captured = { status: number; headers: [string, string][]; bodyBase64: string }

const SKIP_HEADERS = new Set(['date', 'content-length', 'transfer-encoding', 'connection', 'keep-alive'])

export async function capture(response: Response): Promise<Captured> {
  const body = new Uint8Array(await response.arrayBuffer())
  const headers = [...response.headers].filter(([k]) => !SKIP_HEADERS.has(k.toLowerCase()))
  return { status: response.status, headers, bodyBase64: Buffer.from(body).toString('base64') }
}
