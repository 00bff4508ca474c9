// A child server (the real entry point, src/main.ts) on its own database file, and an HTTP client for it that tells
// answers (any status) from no answer (the server was killed mid-request).
import { Database } from 'bun:sqlite'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '..', '..')

export class NoAnswer extends Error {}

export type Reply = { status: number; body: any }

export class Child {
  proc?: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  url = ''
  output: string[] = []

  constructor(
    readonly databasePath: string,
    readonly env: Record<string, string>,
  ) {}

  private environment(): Record<string, string> {
    return {
      ...(process.env as Record<string, string>),
      DATABASE_PATH: this.databasePath,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NEW_LOGIN_LOCATION_CHECK: 'false',
      // Each simulated client sends its own X-Forwarded-For, as clients behind a proxy would.
      TRUST_PROXY: 'true',
      ...this.env,
    }
  }

  /** The CLI on the same file (e.g. `app create`): its stdout as JSON. */
  cli(...args: string[]): any {
    const run = Bun.spawnSync([process.execPath, 'run', 'src/main.ts', ...args], {
      cwd: ROOT,
      env: this.environment(),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    if (run.exitCode !== 0) throw new Error(`cli ${args.join(' ')} failed: ${run.stderr.toString()}`)
    return JSON.parse(run.stdout.toString())
  }

  /** Start the server and wait until it answers /healthz; returns how long that took. */
  async start(): Promise<number> {
    const started = performance.now()
    const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
      cwd: ROOT,
      env: this.environment(),
      stdout: 'pipe',
      stderr: 'pipe',
    })
    this.proc = proc
    void this.collect(proc.stderr)
    const reader = proc.stdout.getReader()
    let seen = ''
    while (!/listening url=(\S+)/.test(seen)) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`server exited before listening: ${seen}\n${this.output.join('\n')}`)
      seen += new TextDecoder().decode(value)
    }
    reader.releaseLock()
    void this.collect(proc.stdout)
    this.url = /listening url=(\S+)/.exec(seen)![1]
    for (;;) {
      const health = await fetch(`${this.url}/healthz`).catch(() => undefined)
      if (health?.status === 200) break
      await Bun.sleep(10)
    }
    return performance.now() - started
  }

  private async collect(stream: ReadableStream<Uint8Array>) {
    try {
      for await (const chunk of stream) this.output.push(...new TextDecoder().decode(chunk).split('\n').filter(Boolean))
    } catch {}
  }

  async kill(): Promise<void> {
    this.proc?.kill('SIGKILL')
    await this.proc?.exited
  }

  async stop(): Promise<void> {
    this.proc?.kill('SIGTERM')
    await Promise.race([this.proc?.exited, Bun.sleep(3000)])
    this.proc?.kill('SIGKILL')
  }

  /** One request. Throws NoAnswer when the connection failed (the server is gone). */
  async call(
    method: string,
    path: string,
    options: {
      token?: string
      body?: unknown
      form?: Record<string, string>
      ip?: string
      headers?: Record<string, string>
    } = {},
  ): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = options.token
    if (options.ip) headers['x-forwarded-for'] = options.ip
    let body: string | undefined
    if (options.form) {
      body = new URLSearchParams(options.form).toString()
      headers['content-type'] = 'application/x-www-form-urlencoded'
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body)
      headers['content-type'] = 'application/json'
    }
    let response: Response
    let text: string
    try {
      response = await fetch(`${this.url}/api/v9${path}`, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(15_000),
      })
      text = await response.text()
    } catch (error) {
      throw new NoAnswer(String(error))
    }
    let parsed: any = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    if (response.status >= 500) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
    return { status: response.status, body: parsed }
  }

  /**
   * Read the database directly, beside the server: the file through a second connection (read-only), or the
   * PostgreSQL database of DATABASE_URL.
   */
  async query<T>(text: string, ...params: unknown[]): Promise<T[]> {
    const url = this.env.DATABASE_URL
    if (url) {
      const { default: postgres } = await import('postgres')
      const sql = postgres(url, { max: 1, onnotice: () => {} })
      try {
        let n = 0
        return (await sql.unsafe(
          text.replace(/\?/g, () => `$${++n}`),
          params as never[],
        )) as unknown as T[]
      } finally {
        await sql.end()
      }
    }
    const db = new Database(this.databasePath, { readonly: true })
    try {
      return db.query(text).all(...(params as never[])) as T[]
    } finally {
      db.close()
    }
  }

  /** The token in the newest mail to an address whose link has this path (/reset#token=…, /wasntme/…). */
  async mailedToken(to: string, path: string): Promise<string | undefined> {
    const rows = await this.query<{ body: string }>(
      'SELECT body FROM outbox WHERE "to" = ? ORDER BY created_at DESC',
      to,
    )
    for (const { body } of rows) {
      const m = new RegExp(`/${path}(?:#token=|/)([^\\s]+)`).exec(body)
      if (m) return decodeURIComponent(m[1])
    }
    return undefined
  }

  /** SQLite's own checks of the file; PostgreSQL keeps its pages and foreign keys itself (nothing to ask). */
  async checks(): Promise<{ integrity: string[]; foreign: unknown[] }> {
    if (this.env.DATABASE_URL) return { integrity: ['ok'], foreign: [] }
    return {
      integrity: (await this.query<{ integrity_check: string }>('PRAGMA integrity_check')).map(
        (r) => r.integrity_check,
      ),
      foreign: await this.query('PRAGMA foreign_key_check'),
    }
  }
}

/** A small seeded generator (mulberry32), so a failing run can be repeated with CRASH_SEED. */
export function random(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(list: T[]) => list[Math.floor(next() * list.length)],
  }
}
