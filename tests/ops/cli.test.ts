// The command line in child processes against temporary databases: help, version, unknown commands, serve flags,
// user create (registration's rules; password from argv, stdin or a terminal prompt), user list; start-up failures as
// one line; the real stdout log (JSON format, shutdown line); METRICS_PORT.
import { describe, expect, test } from 'bun:test'
import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { version } from '../../package.json'
import { cli, freePort, freshEnv, oneLine, serve } from './process-helpers'

const PASSWORD = 'correct horse battery staple'
const COMMANDS = [
  'serve',
  'app create',
  'app list',
  'app set',
  'app lock',
  'app unlock',
  'app delete',
  'app auth-provider add',
  'app auth-provider list',
  'app auth-provider remove',
  'user create',
  'user list',
  'user lock',
  'user delete',
  'operator grant',
  'operator revoke',
  'operator list',
  'audit export',
  'outbox',
  'guild set',
  'experiments load',
  'experiments list',
  'experiments show',
  'experiments eval',
  'backup',
  'restore',
]

describe('help, version, unknown commands', () => {
  test('--help and help print every command to stdout and exit 0, without touching a database', async () => {
    const { env, db } = freshEnv()
    for (const flag of ['--help', 'help']) {
      const r = await cli(env, [flag])
      expect(r.code).toBe(0)
      expect(r.stderr).toBe('')
      for (const command of COMMANDS) expect(r.stdout).toContain(`\n  ${command}`)
    }
    expect(existsSync(db)).toBe(false)
  })

  test('COMMAND --help prints its usage, even when the configuration is bad', async () => {
    const r = await cli(freshEnv({ PORT: 'eighty' }).env, ['user', 'create', '--help'])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('--password-stdin')
  })

  test('--version prints the version, the commit, the build date and the target', async () => {
    const r = await cli(freshEnv().env, ['--version'])
    expect(r.code).toBe(0)
    // From source: the checkout's commit (or "source" outside a git checkout), today, this machine.
    const line = r.stdout.trim()
    const [, v, commit, built, target] =
      /^lobby-server (\S+) \(([0-9a-f]{7,}(?:-dirty)?|source), (\d{4}-\d{2}-\d{2}), ([a-z0-9]+-[a-z0-9]+)\)$/.exec(
        line,
      ) ?? []
    expect(v).toBe(version)
    expect(commit).toBeDefined()
    expect(Math.abs(Date.parse(built) - Date.now())).toBeLessThan(2 * 86_400_000)
    expect(target).toBe(`${process.platform}-${process.arch}`)
    const help = await cli(freshEnv().env, ['--help'])
    expect(help.stdout.split('\n')[0]).toBe(line)
    expect(help.stdout).toContain('usage: lobby-server [COMMAND] [OPTIONS]')
  })

  test('an unknown command is named on stderr with exit 2; unknown options and bad values of known ones exit 2', async () => {
    const { env } = freshEnv()
    const r = await cli(env, ['frobnicate'])
    expect(r.code).toBe(2)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain('unknown command "frobnicate"')
    const sub = await cli(env, ['user', 'frob'])
    expect(sub.code).toBe(2)
    expect(sub.stderr).toContain('"user frob"')
    expect((await cli(env, ['user', 'list', '--bogus'])).code).toBe(2)
    expect((await cli(env, ['serve', '--port', 'abc'])).code).toBe(2)
  })
})

describe('user create and user list', () => {
  test('e-mail, username and password are checked as registration checks them; nothing is created on refusal', async () => {
    const { env } = freshEnv({ LOG_LEVEL: 'silent' })
    const refusals: [string[], RegExp][] = [
      [['--email', 'not-an-email', '--password', PASSWORD], /--email: not a well formed/],
      [['--email', 'a@b', '--password', PASSWORD], /--email/],
      [['--email', 'short@example.test', '--password', 'x'], /password: Must be between 8 and 72/],
      [['--email', 'weak@example.test', '--password', 'password1'], /password: Password is too weak/],
      [['--email', 'long@example.test', '--password', 'x'.repeat(73)], /password: Must be between 8 and 72/],
      [
        ['--email', 'name@example.test', '--username', 'Bad Name!', '--password', PASSWORD],
        /--username: Username can only contain/,
      ],
      [['--email', 'name@example.test', '--username', 'discordfan', '--password', PASSWORD], /--username: .*reserved/],
      [
        ['--email', 'name@example.test', '--username', 'x', '--password', PASSWORD],
        /--username: Must be between 2 and 32/,
      ],
    ]
    for (const [args, message] of refusals) {
      const r = await cli(env, ['user', 'create', ...args])
      expect(r.code, args.join(' ')).toBe(1)
      expect(r.stdout).toBe('')
      expect(r.stderr).toMatch(message)
    }
    expect(JSON.parse((await cli(env, ['user', 'list'])).stdout)).toEqual([])
    // The limits of registration: 8 characters pass.
    const edge = await cli(env, [
      'user',
      'create',
      '--email',
      'Edge@Example.test',
      '--username',
      'edge',
      '--password',
      'qz7!vKp2',
    ])
    expect(edge.code).toBe(0)
    expect(JSON.parse(edge.stdout)).toMatchObject({
      username: 'edge',
      id: expect.stringMatching(/^\d+$/),
      token: expect.any(String),
    })
    const again = await cli(env, ['user', 'create', '--email', 'edge@example.test', '--password', PASSWORD])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already registered')
    const taken = await cli(env, [
      'user',
      'create',
      '--email',
      'other@example.test',
      '--username',
      'edge',
      '--password',
      PASSWORD,
    ])
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain('taken')
  })

  test('--password-stdin reads one line; no password and no terminal is a usage error', async () => {
    const { env } = freshEnv({ LOG_LEVEL: 'silent' })
    const r = await cli(
      env,
      ['user', 'create', '--email', 'stdin@example.test', '--username', 'fromstdin', '--password-stdin'],
      `${PASSWORD}\n`,
    )
    expect(r.code).toBe(0)
    const { url, stop } = await serve({ ...env, LOG_LEVEL: 'warn' })
    try {
      const login = await fetch(`${url}/api/v9/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: 'stdin@example.test', password: PASSWORD }),
      })
      expect(login.status).toBe(200)
    } finally {
      await stop()
    }
    const weak = await cli(env, ['user', 'create', '--email', 'w@example.test', '--password-stdin'], 'password1\n')
    expect(weak.code).toBe(1)
    expect((await cli(env, ['user', 'create', '--email', 'e@example.test', '--password-stdin'], '')).code).toBe(1)
    const none = await cli(env, ['user', 'create', '--email', 'none@example.test'])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('--password-stdin')
    expect(
      (
        await cli(
          env,
          ['user', 'create', '--email', 'both@example.test', '--password', PASSWORD, '--password-stdin'],
          PASSWORD,
        )
      ).code,
    ).toBe(2)
  })

  test.skipIf(!Bun.which('script'))(
    'in a terminal, the password is asked twice without echo',
    async () => {
      const { env } = freshEnv({ LOG_LEVEL: 'silent' })
      const command = `${process.execPath} run src/main.ts user create --email tty@example.test --username fromtty`
      const proc = Bun.spawn(['script', '-qec', command, '/dev/null'], {
        env,
        stdin: 'pipe',
        stdout: 'pipe',
        stderr: 'pipe',
      })
      let seen = ''
      const reader = (async () => {
        for await (const chunk of proc.stdout) seen += new TextDecoder().decode(chunk)
      })()
      const waitFor = async (text: string, count: number) => {
        for (let i = 0; i < 750 && seen.split(text).length - 1 < count; i++) await Bun.sleep(20)
      }
      await waitFor('Password: ', 1)
      proc.stdin.write(`${PASSWORD}\r`)
      proc.stdin.flush()
      await waitFor('Repeat password: ', 1)
      proc.stdin.write(`${PASSWORD}\r`)
      proc.stdin.flush()
      await waitFor('"token"', 1)
      proc.stdin.end()
      await proc.exited
      await reader
      expect(seen).toContain('"username":"fromtty"')
      expect(seen).not.toContain(PASSWORD)
    },
    30_000,
  )

  test('user list: people only (no bots), in ID order, paged with --limit and --after', async () => {
    const { env } = freshEnv({ LOG_LEVEL: 'silent' })
    const ids: string[] = []
    for (const name of ['alpha', 'bravo', 'charlie']) {
      const r = await cli(env, [
        'user',
        'create',
        '--email',
        `${name}@example.test`,
        '--username',
        name,
        '--password',
        PASSWORD,
      ])
      ids.push(JSON.parse(r.stdout).id)
    }
    expect((await cli(env, ['app', 'create', '--name', 'Botty'])).code).toBe(0)
    // app list shows each application's Ed25519 public key (Discord's verify_key), never the private one.
    const apps = JSON.parse((await cli(env, ['app', 'list'])).stdout)
    expect(apps).toEqual([
      {
        id: expect.any(String),
        name: 'Botty',
        bot_user_id: expect.any(String),
        redirect_uris: [],
        verify_key: expect.stringMatching(/^[0-9a-f]{64}$/),
        event_webhooks_url: null,
        locked: false,
      },
    ])
    const all = JSON.parse((await cli(env, ['user', 'list'])).stdout)
    expect(all.map((u: { id: string }) => u.id)).toEqual(ids)
    expect(all[0]).toEqual({
      id: ids[0],
      username: 'alpha',
      email: 'alpha@example.test',
      verified: true,
      state: 'active',
      locked: false,
      created_at: expect.stringMatching(/^\d{4}-/),
      provisional: false,
    })
    const page = JSON.parse((await cli(env, ['user', 'list', '--limit', '1', '--after', ids[0]])).stdout)
    expect(page.map((u: { id: string }) => u.id)).toEqual([ids[1]])
    expect((await cli(env, ['user', 'list', '--limit', '0'])).code).toBe(2)
  })
})

describe('serve', () => {
  test('serve --port and --host are honoured over PORT and HOST', async () => {
    const port = freePort()
    const { env } = freshEnv({ PORT: '1', HOST: '0.0.0.0' })
    const server = await serve(env, ['serve', '--port', String(port), '--host', '127.0.0.1'])
    try {
      expect(server.port).toBe(port)
      expect(server.url).toBe(`http://127.0.0.1:${port}`)
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200)
    } finally {
      await server.stop()
    }
  })

  test('SIGTERM: the requests under way are answered before the server exits (an upgrade gives no client an error)', async () => {
    const { env } = freshEnv()
    const server = await serve(env)
    // Logins of nobody: each hashes a password (tens of ms), so they are still running when the signal comes.
    const logins = Array.from({ length: 12 }, (_, i) =>
      fetch(`${server.url}/api/v10/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ login: `nobody${i}@example.test`, password: 'not-the-password' }),
      }).then(
        (r) => r.status,
        (error) => String(error),
      ),
    )
    // Long enough for the requests to reach the server (loopback), short of the hashing they then wait for.
    await Bun.sleep(60)
    const stopped = server.stop()
    expect(await Promise.all(logins)).toEqual(Array(12).fill(400))
    expect((await stopped).code).toBe(0)
  })

  test('the first start logs each migration it applies, the next none; shutdown lines carry a timestamp and a level', async () => {
    const { env } = freshEnv()
    const first = await serve(env)
    const { stdout } = await first.stop()
    const applied = stdout.split('\n').filter((l) => l.includes(' INFO migration applied '))
    expect(applied.length).toBeGreaterThanOrEqual(1)
    expect(applied[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO migration applied migration=0000_\w+ /)
    expect(stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO shutting down signal=SIGTERM$/m)
    expect(stdout).toMatch(/^\d{4}-\d\d-\d\dT\S+Z INFO stopped$/m)
    const second = await serve(env)
    expect((await second.stop()).stdout).not.toContain('migration applied')
  })

  test('LOG_FORMAT=json: every stdout line is one JSON object with time and level, shutdown included', async () => {
    const { env } = freshEnv({ LOG_FORMAT: 'json' })
    const server = await serve(env)
    await fetch(`${server.url}/api/v9/nope`)
    await Bun.sleep(100)
    const { code, stdout } = await server.stop()
    expect(code).toBe(0)
    const entries = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    for (const e of entries) {
      expect(e.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(['info', 'warn', 'error', 'debug']).toContain(e.level)
    }
    expect(entries.map((e) => e.msg)).toEqual(
      expect.arrayContaining(['listening', 'request', 'shutting down', 'stopped']),
    )
    expect(entries.find((e) => e.msg === 'request')).toMatchObject({ route: '<unmatched>', status: 404 })
    expect(entries.find((e) => e.msg === 'shutting down')).toMatchObject({ signal: 'SIGTERM', level: 'info' })
  })

  test('a closed stdout does not stop the server: one line on stderr, requests still answered', async () => {
    const { env } = freshEnv()
    const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], {
      env,
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
    try {
      const reader = proc.stdout.getReader()
      let seen = ''
      while (!/listening url=(\S+)/.test(seen)) seen += new TextDecoder().decode((await reader.read()).value)
      const url = /listening url=(\S+)/.exec(seen)![1]
      await reader.cancel() // the log reader goes away
      for (let i = 0; i < 100; i++) expect((await fetch(`${url}/healthz`)).status).toBe(200)
      await Bun.sleep(100)
      expect((await fetch(`${url}/healthz`)).status).toBe(200)
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
      expect(await new Response(proc.stderr).text()).toMatch(
        /^\S+Z ERROR stdout failed \(EPIPE\): info and debug lines are no longer written\n$/,
      )
    } finally {
      proc.kill('SIGKILL')
    }
  })

  test('a line larger than the pipe takes, after stdout closed: the write is refused quietly, the process carries on', async () => {
    // A write the pipe takes only in part returns a promise (not only the flush), which rejects with EPIPE once the
    // reader has gone: deterministic with a line larger than the pipe's buffer (64 KiB on Linux).
    const log = join(import.meta.dir, '../../src/core/log.ts')
    const script = `import { log, flushLogs } from ${JSON.stringify(log)}
      log.info('ready'); await flushLogs()
      await new Promise((r) => process.stdin.once('data', r))
      for (let i = 0; i < 3; i++) { log.info('big', { pad: 'x'.repeat(300_000) }); await flushLogs(); await Bun.sleep(20) }
      process.stderr.write('alive\\n')`
    const proc = Bun.spawn([process.execPath, '-e', script], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
    try {
      const reader = proc.stdout.getReader()
      let seen = ''
      while (!seen.includes('ready')) seen += new TextDecoder().decode((await reader.read()).value)
      await reader.cancel()
      proc.stdin.write('go\n')
      proc.stdin.end()
      expect(await proc.exited).toBe(0)
      expect(await new Response(proc.stderr).text()).toMatch(
        /^\S+Z ERROR stdout failed \(EPIPE\): info and debug lines are no longer written\nalive\n$/,
      )
    } finally {
      proc.kill('SIGKILL')
    }
  })

  test('METRICS_PORT: /metrics on its own listener only; the main port keeps answering 404', async () => {
    const metricsPort = freePort()
    const server = await serve(freshEnv({ METRICS_PORT: String(metricsPort) }).env)
    try {
      await fetch(`${server.url}/api/v9/users/@me`)
      let text = ''
      for (let i = 0; i < 50 && !text.includes('route="/api/v9/users/@me"'); i++) {
        text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text()
        await Bun.sleep(20)
      }
      expect(text).toContain('lobby_http_requests_total{method="GET",route="/api/v9/users/@me",status="401"} 1')
      expect(text).toContain('lobby_database_size_bytes')
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v9/users/@me`)).status).toBe(404)
      expect((await fetch(`${server.url}/metrics`)).status).toBe(404)
    } finally {
      await server.stop()
    }
  })
})

describe('start-up failures are one line, no stack trace, non-zero exit', () => {
  test('HOST that is not an address or a resolvable name', async () => {
    const r = await cli(freshEnv({ HOST: 'notahost.invalid' }).env, [])
    expect(oneLine(r)).toContain('"notahost.invalid"')
  })

  test('a DATABASE_PATH that cannot be created', async () => {
    const { dir, env } = freshEnv()
    const file = join(dir, 'a-file')
    writeFileSync(file, 'not a folder')
    const r = await cli({ ...env, DATABASE_PATH: join(file, 'app.sqlite') }, [])
    expect(oneLine(r)).toContain(`cannot open database ${join(file, 'app.sqlite')}`)
    // The CLI says the same in one line.
    const c = await cli({ ...env, DATABASE_PATH: join(file, 'app.sqlite') }, ['user', 'list'])
    expect(oneLine(c)).toContain('cannot open database')
  })

  test('a port already in use (no port sharing), for the API or for METRICS_PORT', async () => {
    const first = await serve(freshEnv().env)
    try {
      const r = await cli(freshEnv({ PORT: String(first.port) }).env, [])
      expect(oneLine(r)).toContain(`127.0.0.1:${first.port}: the port is already in use`)
      const m = await cli(freshEnv({ METRICS_PORT: String(first.port) }).env, [])
      expect(oneLine(m)).toContain(`127.0.0.1:${first.port}: the port is already in use`)
    } finally {
      await first.stop()
    }
  })
})
