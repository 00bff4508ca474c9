// wrk, pinned to LOAD_CPU, driven by a generated Lua script (method, headers, body) that prints its summary as JSON.
import { join } from 'node:path'
import { LOAD_CPU, pinned } from './machine'

export type Request = { method: string; path: string; headers?: Record<string, string>; body?: string }
export type WrkOptions = { seconds: number; connections: number; threads: number }
export type WrkResult = { rps: number; p50Ms: number; p99Ms: number; requests: number; errors: number; non2xx: number }

/** A Lua long string that cannot be closed by its content. */
function luaString(value: string): string {
  let level = 1
  while (value.includes(`]${'='.repeat(level)}]`)) level += 1
  const eq = '='.repeat(level)
  // A newline right after the opening bracket is dropped by Lua; add one so a leading newline survives.
  return `[${eq}[\n${value}]${eq}]`
}

function script(request: Request): string {
  const lines = [`wrk.method = ${luaString(request.method)}`]
  if (request.body !== undefined) lines.push(`wrk.body = ${luaString(request.body)}`)
  for (const [k, v] of Object.entries(request.headers ?? {}))
    lines.push(`wrk.headers[ ${luaString(k)} ] = ${luaString(v)}`)
  lines.push(`done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('\\nBENCH {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.connect, e.read, e.write, e.status, e.timeout))
end`)
  return lines.join('\n') + '\n'
}

let counter = 0

export async function wrk(baseUrl: string, request: Request, options: WrkOptions, dir: string): Promise<WrkResult> {
  counter += 1
  const file = join(dir, `wrk-${counter}.lua`)
  await Bun.write(file, script(request))
  const proc = Bun.spawn(
    pinned(LOAD_CPU, [
      'wrk',
      `-t${options.threads}`,
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '10s',
      '-s',
      file,
      `${baseUrl}${request.path}`,
    ]),
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const [out, err] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  const line = /^BENCH (.+)$/m.exec(out)
  if (!line) throw new Error(`wrk gave no summary:\n${out}\n${err}`)
  const s = JSON.parse(line[1]) as Record<string, number>
  return {
    rps: s.requests / (s.duration_us / 1e6),
    p50Ms: s.p50_us / 1000,
    p99Ms: s.p99_us / 1000,
    requests: s.requests,
    errors: s.connect + s.read + s.write + s.timeout,
    non2xx: s.status,
  }
}
