// Where the browser flows run: the shared in-process test server (from source), or the compiled binary built by the
// project's own build script into a temporary folder and started as a self-hoster starts it. A flow only uses what
// both offer: HTTP, and the operator's commands (in-process helpers from source, the binary's CLI when compiled).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { config, setConfig } from '../../src/config'
import { captureLog } from '../../src/core/log'
import { readOutbox } from '../../src/delivery'
import { api as sourceApi, databaseEnv, makeApp, makeUser, server, type Reply } from '../helpers'
import { cli } from '../ops/process-helpers'

export type TargetUser = { id: string; token: string; email: string; password: string; username: string }
export type TargetApp = { id: string; bot_token: string; client_secret: string }

export type Target = {
  /** The shared server from source, the binary, or another process (the README's commands): for test names. */
  kind: 'source' | 'binary' | 'process'
  /** Where the server listens (127.0.0.1); browsers use `http://localhost:<port>` (WebAuthn wants a name). */
  port: number
  /** A REST call under /api/v9 (or a path starting with /api). */
  api<T = any>(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply<T>>
  /** A verified user with a session, as `user create` makes one. */
  user(): Promise<TargetUser>
  /** An application with its bot, as `app create` makes one. */
  app(redirectUris: string[]): Promise<TargetApp>
  /** `operator grant --user LOGIN` through the CLI (the console's first operator is made so). */
  grantOperator(login: string): Promise<void>
  /** Bodies of the e-mails and texts sent to an address, newest first. */
  outbox(to: string): Promise<string[]>
  /** What the server logged so far (the binary's stdout and stderr; the shared server's log lines). */
  output(): string
  /** Stop what the target started (the binary and its folder; nothing from source). */
  close(): Promise<void>
}

let counter = 0
const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${++counter}`

/** The shared in-process server, through the same helpers the other tests use; its log (debug) is kept. */
export async function sourceTarget(): Promise<Target> {
  const { port } = await server()
  let output = ''
  const before = config().logLevel
  captureLog((line) => void (output += line))
  setConfig({ ...config(), logLevel: 'debug' })
  return {
    kind: 'source',
    port,
    api: (method, path, options) => sourceApi(method, path, options),
    user: () => makeUser(),
    app: async (uris) => {
      const app = await makeApp(uris)
      return { id: app.id, bot_token: app.bot_token, client_secret: app.client_secret }
    },
    grantOperator: async (login) => {
      const env = { ...process.env, ...databaseEnv(), LOG_LEVEL: 'silent' }
      const made = await cli(env, ['operator', 'grant', '--user', login])
      if (made.code !== 0) throw new Error(`operator grant: exit ${made.code}\n${made.stderr}`)
    },
    outbox: async (to) => (await readOutbox(to)).map((m) => m.body),
    output: () => output,
    close: async () => {
      captureLog(undefined)
      setConfig({ ...config(), logLevel: before })
    },
  }
}

/** Build the binary with scripts/build.ts (as `bun run build` does) into a temp folder. */
export function buildBinary(dir: string): string {
  const outfile = join(dir, 'lobby-server')
  const build = Bun.spawnSync([process.execPath, 'run', 'scripts/build.ts', outfile], {
    cwd: join(import.meta.dir, '../..'),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (build.exitCode !== 0) throw new Error(`build failed:\n${build.stdout}\n${build.stderr}`)
  return outfile
}

export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

/**
 * The compiled binary, built once per test process and started in a folder of its own with its own database,
 * BASE_URL on localhost; `close()` stops it (SIGTERM) and removes the folder.
 */
export async function binaryTarget(env: Record<string, string> = {}): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), 'lobby-binary-'))
  const binary = buildBinary(dir)
  const port = freePort()
  const database = join(dir, 'data', 'app.sqlite')
  const serverEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: dir,
    PORT: String(port),
    HOST: '127.0.0.1',
    BASE_URL: `http://localhost:${port}`,
    DATABASE_PATH: database,
    LOG_LEVEL: 'info',
    ...env,
  }
  let output = ''
  const child = Bun.spawn([binary], { cwd: dir, env: serverEnv, stdout: 'pipe', stderr: 'pipe' })
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true })
  }
  void drain(child.stdout)
  void drain(child.stderr)
  const close = async () => {
    child.kill('SIGTERM')
    await child.exited
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 15_000
  while (!output.includes(' listening ')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close()
      throw new Error(`the binary did not start:\n${output}`)
    }
    await Bun.sleep(50)
  }

  /** One CLI command of the binary on the same database; its JSON answer. */
  const cli = async (args: string[], stdin?: string) => {
    const proc = Bun.spawn([binary, ...args], {
      cwd: dir,
      env: serverEnv,
      stdin: stdin === undefined ? 'ignore' : new Blob([stdin]),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    if (code !== 0) throw new Error(`${args.join(' ')}: exit ${code}\n${err}`)
    return JSON.parse(out)
  }

  const api: Target['api'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = options.token
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const url = `http://127.0.0.1:${port}${path.startsWith('/api') ? '' : '/api/v9'}${path}`
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const response = await fetch(url, { method, headers, body })
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    return { status: response.status, body: parsed as never, headers: response.headers }
  }

  return {
    kind: 'binary',
    port,
    api,
    async user() {
      const username = unique('bin')
      const email = `${username}@example.test`
      const password = 'correct horse battery staple'
      const made = await cli(['user', 'create', '--email', email, '--username', username, '--password-stdin'], password)
      return { id: made.id, token: made.token, email, password, username: made.username }
    },
    async app(uris) {
      return cli(['app', 'create', '--name', unique('app'), ...uris.flatMap((u) => ['--redirect-uri', u])])
    },
    async grantOperator(login) {
      await cli(['operator', 'grant', '--user', login])
    },
    async outbox(to) {
      return ((await cli(['outbox', '--to', to, '--json'])) as { body: string }[]).map((r) => r.body)
    },
    output: () => output,
    close,
  }
}
