// Where the bench runs: tool checks, CPU pinning, the machine's description, small process helpers.
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'

/** The server under test and every baseline run on this CPU; wrk and the socket clients on LOAD_CPU. */
export const SERVER_CPU = Number(process.env.BENCH_SERVER_CPU ?? 0)
export const LOAD_CPU = Number(process.env.BENCH_LOAD_CPU ?? 1)

export const BUN = process.execPath
export const ROOT = new URL('../..', import.meta.url).pathname.replace(/\/$/, '')

/** Stops the run with one line when a tool is missing. */
export function requireTools(): void {
  if (!Bun.which('wrk')) {
    console.error('wrk is missing: apt-get install -y wrk')
    process.exit(1)
  }
  if (!Bun.which('taskset')) {
    console.error('taskset is missing: apt-get install -y util-linux')
    process.exit(1)
  }
}

/** A command line pinned to one CPU. */
export function pinned(cpu: number, cmd: string[]): string[] {
  return ['taskset', '-c', String(cpu), ...cmd]
}

/** The 1-minute load average: other work on the machine skews absolute numbers (ratios less so). */
export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ')[0]
  } catch {
    return '?'
  }
}

export function machine(): { nproc: number; cpu: string; bun: string; kernel: string; date: string } {
  let cpu = 'unknown'
  try {
    cpu = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? cpu
  } catch {}
  let kernel = 'unknown'
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()
  } catch {}
  return {
    nproc: cpus().length,
    cpu,
    bun: Bun.version,
    kernel,
    date: new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC',
  }
}

/** Resident set size of a process, in KB (from /proc). */
export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!m) throw new Error(`no VmRSS for ${pid}`)
  return Number(m[1])
}

/** CPU time (user + system, every thread) a process has used so far, in ms (/proc/PID/stat, 10 ms ticks). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100)
}

/** A TCP port nobody listens on right now. */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

export async function waitForHealth(url: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    try {
      const r = await fetch(`${url}/healthz`)
      await r.arrayBuffer()
      if (r.status === 200) return
    } catch {}
    if (performance.now() > deadline) throw new Error(`${url}/healthz did not answer within ${timeoutMs} ms`)
    await Bun.sleep(5)
  }
}

export const sleep = (ms: number) => Bun.sleep(ms)

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]
}

export function median(values: number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  )
}
