// A real PostgreSQL server for the tests: Debian's package (scripts/ensure-postgresql.sh installs it where missing),
// one `initdb` per test process in a temp dir, listening on a unix socket in that dir and on 127.0.0.1 only, with
// durability off (the dir is thrown away). Started on first use, shared by every test file of the run (`bun test`
// runs them in one process), stopped by pid after the last file, passing or failing (tests/preload.ts); if the
// process dies without finishing (SIGKILL), a watchdog shell that holds the other end of a pipe stops the server. Each test file takes its
// own database, copied from a template that holds the migrations of drizzle-pg/ (or an empty one).
// As root (CI), initdb and the server run as the `postgres` user (initdb refuses root) through setpriv, which execs:
// the pid started is the server's. SCALE-OUT.md §5 has the figures this is built on.
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres, { type Options, type Sql } from 'postgres'
import { applyPgMigrations } from '../../src/db/pg/migrate'

/** The newest installed server's bin/ (PG_BIN_DIR overrides). */
export function postgresBinDir(): string | undefined {
  if (process.env.PG_BIN_DIR) return process.env.PG_BIN_DIR
  const base = '/usr/lib/postgresql'
  if (!existsSync(base)) return undefined
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a))
  return versions.length ? join(base, versions[0], 'bin') : undefined
}

export type Cluster = {
  dir: string
  port: number
  pid: number
  /** Seconds: initdb, then start until the first query answers. */
  timings: { initdb: number; start: number }
  /** Connection options for one database (the unix socket: no port to race for). */
  options(database: string, extra?: Options<{}>): Options<{}>
  /** A URL for one database, over 127.0.0.1 (for a server process's DATABASE_URL). */
  url(database: string): string
  stop(): void
}

const key = Symbol.for('lobby-server.test-postgres')
/** tests/preload.ts calls it after the last test file (bun test emits no process 'exit' event). */
const stopKey = Symbol.for('lobby-server.test-postgres-stop')
type StopHolder = { [stopKey]?: () => void }
type Holder = { [key]?: Promise<Cluster> }

/** The run's server (started on first call). */
export function cluster(): Promise<Cluster> {
  const holder = globalThis as Holder
  holder[key] ??= start()
  return holder[key]!
}

function run(cmd: string[], cwd: string): void {
  const proc = Bun.spawnSync(cmd, { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (proc.exitCode !== 0)
    throw new Error(`${cmd.join(' ')} failed: ${proc.stderr.toString()}${proc.stdout.toString()}`)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

// Runs the server in the background, prints nothing, and waits on its stdin: when the test process goes away
// however it goes, the pipe closes, the server gets SIGQUIT (immediate shutdown) and the dir is thrown away.
const WATCHDOG =
  '"$@" 2>>"$PG_LOG" >&2 & pid=$!; read -r _; kill -QUIT "$pid" 2>/dev/null; wait "$pid"; rm -rf "$PG_DIR"'

async function start(): Promise<Cluster> {
  const bin = postgresBinDir()
  if (!bin) throw new Error('PostgreSQL is not installed: run sh scripts/ensure-postgresql.sh')
  const dir = mkdtempSync(join(tmpdir(), 'lobby-pg-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  let as: string[] = []
  if (process.getuid?.() === 0) {
    const [uid, gid] = readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((line) => line.startsWith('postgres:'))!
      .split(':')
      .slice(2, 4)
      .map(Number)
    chownSync(dir, uid, gid)
    as = ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--']
  }
  const began = performance.now()
  run(
    [...as, join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
    dir,
  )
  const initdb = (performance.now() - began) / 1000

  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const started = performance.now()
    const watchdog = Bun.spawn(
      [
        'sh',
        '-c',
        WATCHDOG,
        'sh',
        ...as,
        join(bin, 'postgres'),
        '-D',
        data,
        '-k',
        dir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=200',
      ],
      {
        cwd: dir,
        stdin: 'pipe',
        stdout: 'ignore',
        stderr: 'ignore',
        env: { ...process.env, PG_LOG: log, PG_DIR: dir },
      },
    )
    const options = (database: string, extra: Options<{}> = {}): Options<{}> => ({
      host: dir,
      port,
      user: 'postgres',
      database,
      onnotice: () => {},
      ...extra,
    })
    let pid = 0
    const probe = postgres(options('postgres', { max: 1, connect_timeout: 2 }))
    try {
      for (const deadline = Date.now() + 30_000; ; ) {
        if (watchdog.exitCode !== null) break
        try {
          await probe`SELECT 1`
          pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
          break
        } catch (error) {
          if (Date.now() > deadline) throw error
          await Bun.sleep(20)
        }
      }
    } finally {
      await probe.end({ timeout: 1 })
    }
    if (!pid) {
      const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
      if (attempt < 5 && /could not bind|already in use/i.test(text)) continue
      rmSync(dir, { recursive: true, force: true })
      throw new Error(`PostgreSQL did not start: ${text}`)
    }
    const startSeconds = (performance.now() - started) / 1000
    let stopped = false
    const stop = () => {
      if (stopped) return
      stopped = true
      process.kill(pid, 'SIGQUIT')
      // The watchdog reaps the server once its stdin closes (until then the exited server is a zombie).
      watchdog.stdin.end()
      for (const until = Date.now() + 5000; alive(pid) && Date.now() < until; ) Bun.sleepSync(5)
      rmSync(dir, { recursive: true, force: true })
      if (process.env.PG_HARNESS_TRACE) console.error(`postgres ${pid} stopped, ${dir} removed`)
    }
    ;(globalThis as StopHolder)[stopKey] = stop
    return {
      dir,
      port,
      pid,
      timings: { initdb, start: startSeconds },
      options,
      url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
      stop,
    }
  }
}

const TEMPLATE = 'lobby_template'
const templateKey = Symbol.for('lobby-server.test-postgres-template')
type TemplateHolder = { [templateKey]?: Promise<number> }

/** The template database: the migrations applied once per run; resolves to the seconds that took. */
function template(): Promise<number> {
  const holder = globalThis as TemplateHolder
  holder[templateKey] ??= (async () => {
    const server = await cluster()
    const admin = postgres(server.options('postgres', { max: 1 }))
    await admin.unsafe(`CREATE DATABASE ${TEMPLATE}`)
    await admin.end()
    const sql = postgres(server.options(TEMPLATE, { max: 1 }))
    const began = performance.now()
    await applyPgMigrations(sql)
    const seconds = (performance.now() - began) / 1000
    await sql.end()
    return seconds
  })()
  return holder[templateKey]!
}

export type TestDatabase = { name: string; url: string; options(extra?: Options<{}>): Options<{}>; sql: Sql }

let counter = 0

/**
 * A database of its own for a test file: migrated (a copy of the template), or `empty` (from template0). Its
 * client `sql` is closed with the server at exit; close it sooner with `await db.sql.end()`.
 */
export async function testDatabase({ empty = false } = {}): Promise<TestDatabase> {
  const server = await cluster()
  if (!empty) await template()
  counter += 1
  const name = `t_${process.pid}_${counter}`
  const admin = postgres(server.options('postgres', { max: 1 }))
  try {
    await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE ${empty ? 'template0' : TEMPLATE}`)
  } finally {
    await admin.end()
  }
  const options = (extra: Options<{}> = {}) => server.options(name, extra)
  return { name, url: server.url(name), options, sql: postgres(options()) }
}

/** Seconds the template's migrations took (after testDatabase()). */
export function templateSeconds(): Promise<number> {
  return template()
}
