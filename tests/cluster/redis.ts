// A real Redis server for a test file: Debian's redis-server (scripts/ensure-redis.sh installs it where missing), in a
// temp dir, on a free port of 127.0.0.1 only, persisting as the cluster asks (no RDB, append-only file, fsync every
// second). It starts in ~20 ms, so each file takes its own and stops it by pid in afterAll; `kill()` then `restart()`
// brings it back on the same dir and port (the kill tests). If the test process dies without stopping it, a watchdog
// shell that holds the other end of a pipe stops the server and throws the dir away (as tests/db/postgres.ts does).
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The redis-server binary (REDIS_SERVER overrides), or undefined when it is not installed. */
export function redisServerPath(): string | undefined {
  const path = process.env.REDIS_SERVER || '/usr/bin/redis-server'
  return existsSync(path) ? path : undefined
}

export type RedisServer = {
  dir: string
  port: number
  /** The running server's pid (0 after kill() until restart()). */
  pid: number
  url: string
  /** Milliseconds from spawn to the first PONG, of the last start. */
  startMs: number
  /** SIGKILL the server: no shutdown, the append-only file as it is on disk. */
  kill(): void
  /** Start it again on the same dir and port; resolves at its first PONG (after it has loaded its data). */
  restart(): Promise<void>
  /** Stop it and throw its dir away. */
  stop(): void
}

/** A port nothing listens on right now. */
function freePort(): number {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = probe
  probe.stop(true)
  return port
}

/** Whether a PING on a new connection answers +PONG (not -LOADING while the server reads its file). */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' })
    let answer = ''
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.on('error', () => done(false))
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (chunk) => {
      answer += chunk.toString()
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'))
    })
  })
}

/** Whether `pid` runs: not gone, and not a zombie that the watchdog shell has yet to reap. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))
  } catch {
    return false
  }
}

// Starts the server in the background, prints its pid and waits on stdin. A line `keep` (a restart follows) leaves the
// dir; end of input (the test process went away, or stop()) kills the server and removes the dir.
const WATCHDOG =
  '"$@" >/dev/null 2>&1 & pid=$!; echo "$pid"; read -r what; kill -KILL "$pid" 2>/dev/null; wait "$pid"; [ "$what" = keep ] || rm -rf "$REDIS_DIR"'

function logOf(dir: string): string {
  const path = join(dir, 'redis.log')
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

export async function startRedis(): Promise<RedisServer> {
  const bin = redisServerPath()
  if (!bin) throw new Error('redis-server is not installed: run sh scripts/ensure-redis.sh')
  const dir = mkdtempSync(join(tmpdir(), 'lobby-redis-'))
  let watchdog: ReturnType<typeof Bun.spawn<'pipe', 'pipe', 'ignore'>> | undefined
  const server: RedisServer = {
    dir,
    port: 0,
    pid: 0,
    url: '',
    startMs: 0,
    kill() {
      end('keep')
    },
    async restart() {
      end('keep')
      if (!(await launch(server.port))) throw new Error(`redis-server did not start again: ${logOf(dir)}`)
    },
    stop() {
      end('stop')
      rmSync(dir, { recursive: true, force: true })
    },
  }

  /** SIGKILL the server and let its watchdog go (which reaps it, and removes the dir unless `keep`). */
  function end(how: 'keep' | 'stop'): void {
    const { pid } = server
    if (pid) process.kill(pid, 'SIGKILL')
    if (how === 'keep') watchdog?.stdin.write('keep\n')
    watchdog?.stdin.end()
    watchdog = undefined
    for (const until = Date.now() + 5000; pid && alive(pid) && Date.now() < until; ) Bun.sleepSync(2)
    server.pid = 0
  }

  /** Start on `port`: resolves once it answers PONG, false if it exited first (the port was taken). */
  async function launch(port: number): Promise<boolean> {
    const began = performance.now()
    // biome-ignore format: one option per line reads as the command it is
    const args = [
      bin!,
      '--port', String(port),
      '--bind', '127.0.0.1',
      '--dir', dir,
      '--save', '',
      '--appendonly', 'yes',
      '--appendfsync', 'everysec',
      '--logfile', join(dir, 'redis.log'),
    ]
    const proc = Bun.spawn(['sh', '-c', WATCHDOG, 'sh', ...args], {
      cwd: dir,
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'ignore',
      env: { ...process.env, REDIS_DIR: dir },
    })
    const reader = proc.stdout.getReader()
    let text = ''
    while (!text.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    reader.releaseLock()
    const pid = Number(text.trim())
    watchdog = proc
    server.pid = pid
    for (const deadline = Date.now() + 10_000; ; await Bun.sleep(5)) {
      if (await pong(port)) break
      if (!alive(pid) || Date.now() > deadline) {
        end('keep')
        return false
      }
    }
    server.port = port
    server.url = `redis://127.0.0.1:${port}`
    server.startMs = performance.now() - began
    return true
  }

  for (let attempt = 1; ; attempt++) {
    if (await launch(freePort())) return server
    const text = logOf(dir)
    if (attempt < 5 && /address already in use/i.test(text)) continue
    server.stop()
    throw new Error(`redis-server did not start: ${text}`)
  }
}
