// Servers and CLI commands as child processes on temporary databases, with their output captured.
import { afterAll } from 'bun:test'
import { join } from 'node:path'
import { testDir } from '../helpers'

export type Env = Record<string, string | undefined>
const live = new Set<Bun.Subprocess>()
afterAll(() => {
  for (const p of live) p.kill('SIGKILL')
})

/** A fresh database path (its folder exists) and the environment that points at it. */
export function freshEnv(extra: Env = {}): { dir: string; db: string; env: Env } {
  const dir = testDir()
  const db = join(dir, 'data', 'app.sqlite')
  // Operations tests write in bursts from one token; the per-route limits are tested elsewhere (tests/core/rate-limits).
  return {
    dir,
    db,
    env: {
      ...process.env,
      DATABASE_PATH: db,
      LOG_LEVEL: 'info',
      PORT: '0',
      HOST: '127.0.0.1',
      ROUTE_RATE_LIMITS: 'false',
      // Listening on an IP with no BASE_URL: WebAuthn's relying party is named, so no passkey warning at start.
      WEBAUTHN_RP_ID: 'localhost',
      ...extra,
    },
  }
}

export type Result = { code: number; stdout: string; stderr: string }

/** What runs the server and its CLI: the source tree, or a compiled binary's path. */
const SOURCE = [process.execPath, 'run', 'src/main.ts']

export async function cli(env: Env, args: string[], stdin?: string, program: string[] = SOURCE): Promise<Result> {
  const proc = Bun.spawn([...program, ...args], {
    env,
    stdin: stdin === undefined ? 'ignore' : new Blob([stdin]),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

export type Served = {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  port: number
  output: () => string
  stop: () => Promise<Result>
}

/** Start `server [args]`; resolves once it prints its listening line (rejects with its output if it exits first). */
export async function serve(env: Env, args: string[] = [], program: string[] = SOURCE): Promise<Served> {
  const proc = Bun.spawn([...program, ...args], {
    env,
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  live.add(proc)
  let stdout = ''
  let stderr = ''
  const pump = async (stream: ReadableStream<Uint8Array>, add: (s: string) => void) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) add(decoder.decode(chunk, { stream: true }))
  }
  const pumped = Promise.all([pump(proc.stdout, (s) => (stdout += s)), pump(proc.stderr, (s) => (stderr += s))])
  const deadline = Date.now() + 15_000
  while (!/listening url=(\S+)|"msg":"listening"/.test(stdout)) {
    if (proc.exitCode !== null || Date.now() > deadline) {
      await pumped
      live.delete(proc)
      throw new Error(`server did not start (exit ${proc.exitCode}): ${stdout}${stderr}`)
    }
    await Bun.sleep(20)
  }
  const url =
    /listening url=(\S+)/.exec(stdout)?.[1] ??
    JSON.parse(stdout.split('\n').find((l) => l.includes('"msg":"listening"'))!).url
  return {
    proc,
    url,
    port: Number(new URL(url).port),
    output: () => stdout + stderr,
    async stop() {
      proc.kill('SIGTERM')
      const code = await proc.exited
      await pumped
      live.delete(proc)
      return { code, stdout, stderr }
    },
  }
}

/** A port nothing listens on right now. */
export function freePort(): number {
  const s = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = s.port!
  s.stop(true)
  return port
}

/** A start-up failure: non-zero exit, one line on stderr, no stack trace. */
export function oneLine(r: Result): string {
  const lines = r.stderr.trim().split('\n')
  if (lines.length !== 1 || /^\s+at /m.test(r.stderr) || r.code === 0)
    throw new Error(`expected one error line and a non-zero exit, got exit ${r.code}:\n${r.stderr}`)
  return lines[0]
}
