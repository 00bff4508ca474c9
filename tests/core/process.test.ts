// The server and CLI as separate processes: CLI output, persistence across restarts, SIGTERM shutdown.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { testDir } from '../helpers'

const dir = testDir()
const env = {
  ...process.env,
  DATABASE_PATH: join(dir, 'nested', 'app.sqlite'),
  LOG_LEVEL: 'info',
  PORT: '0',
  HOST: '127.0.0.1',
}
const live: Bun.Subprocess[] = []
afterAll(() => live.forEach((p) => p.kill()))

function cli(...args: string[]) {
  const proc = Bun.spawnSync([process.execPath, 'run', 'src/main.ts', ...args], { env, stdout: 'pipe', stderr: 'pipe' })
  return { code: proc.exitCode, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() }
}

async function startProcess(): Promise<{ proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>; url: string }> {
  const proc = Bun.spawn([process.execPath, 'run', 'src/main.ts'], { env, stdout: 'pipe', stderr: 'pipe' })
  live.push(proc)
  const reader = proc.stdout.getReader()
  let seen = ''
  while (!/listening url=(\S+)/.test(seen)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited: ${seen}`)
    seen += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return { proc, url: /listening url=(\S+)/.exec(seen)![1] }
}

test('app create prints one JSON object with id, name, bot_token, client_secret', () => {
  const r = cli('app', 'create', '--name', 'Game One', '--redirect-uri', 'https://game.example/cb')
  expect(r.code).toBe(0)
  const lines = r.stdout.trim().split('\n')
  expect(lines).toHaveLength(1)
  const app = JSON.parse(lines[0])
  expect(Object.keys(app).sort()).toEqual(['bot_token', 'client_secret', 'id', 'name'])
  expect(app.name).toBe('Game One')
  expect(app.bot_token.length).toBeGreaterThan(40)
  const list = JSON.parse(cli('app', 'list').stdout)
  expect(
    list.some(
      (a: { id: string; redirect_uris: string[] }) =>
        a.id === app.id && a.redirect_uris[0] === 'https://game.example/cb',
    ),
  ).toBe(true)
})

test('bad CLI usage exits 2 with usage on stderr', () => {
  expect(cli('app', 'create').code).toBe(2)
  expect(cli('nonsense').code).toBe(2)
  expect(cli('app', 'create', '--name', 'x', '--redirect-uri', 'not a url').code).toBe(2)
})

test('rows survive a restart; SIGTERM stops the server cleanly', async () => {
  const user = JSON.parse(
    cli(
      'user',
      'create',
      '--email',
      'Persist@Example.test',
      '--password',
      'a long enough password',
      '--username',
      'persist',
    ).stdout,
  )
  expect(user.id).toMatch(/^\d+$/)
  const app = JSON.parse(cli('app', 'create', '--name', 'Persisted').stdout)

  let { proc, url } = await startProcess()
  let me = await fetch(`${url}/api/v9/users/@me`, { headers: { authorization: user.token } })
  expect(me.status).toBe(200)
  expect(((await me.json()) as any).email).toBe('persist@example.test')
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)

  ;({ proc, url } = await startProcess())
  me = await fetch(`${url}/api/v9/users/@me`, { headers: { authorization: user.token } })
  expect(((await me.json()) as any).id).toBe(user.id)
  const bot = await fetch(`${url}/api/v9/users/@me`, { headers: { authorization: `Bot ${app.bot_token}` } })
  expect(((await bot.json()) as any).bot).toBe(true)
  proc.kill('SIGTERM')
  expect(await proc.exited).toBe(0)
})

test('SIGTERM: identified sockets get op 7 Reconnect, then every socket closes 1001; exit 0', async () => {
  const app = JSON.parse(cli('app', 'create', '--name', 'Reconnect').stdout)
  const { proc, url } = await startProcess()
  const open = () => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/gateway?v=10&encoding=json`)
    const frames: { op: number; t: string | null }[] = []
    const hello = new Promise((resolve) => {
      ws.onmessage = (m) => {
        frames.push(JSON.parse(String(m.data)))
        resolve(undefined)
      }
    })
    const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)))
    return { ws, frames, hello, closed }
  }
  const identified = open()
  const idle = open()
  await Promise.all([identified.hello, idle.hello])
  identified.ws.send(JSON.stringify({ op: 2, d: { token: `Bot ${app.bot_token}`, properties: {}, intents: 0 } }))
  while (!identified.frames.some((f) => f.t === 'READY')) await Bun.sleep(10)
  proc.kill('SIGTERM')
  expect(await identified.closed).toBe(1001)
  expect(await idle.closed).toBe(1001)
  expect(identified.frames.at(-1)?.op).toBe(7)
  expect(idle.frames.map((f) => f.op)).toEqual([10])
  expect(await proc.exited).toBe(0)
})

test('server outbox prints what was sent; user lock ends the sessions of a running server', async () => {
  const { proc, url } = await startProcess()
  const email = `outbox${Date.now()}@example.test`
  const reg = await fetch(`${url}/api/v9/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      username: `ob${Date.now()}`,
      email,
      password: 'a long enough password',
      date_of_birth: '1990-01-01',
      consent: true,
    }),
  })
  const { token } = (await reg.json()) as { token: string }
  const rows = JSON.parse(cli('outbox', '--to', email, '--json').stdout)
  expect(rows).toHaveLength(1)
  expect(rows[0].body).toContain('/verify#token=')
  expect(cli('outbox', '--to', email).stdout).toContain('/verify#token=')

  const ws = new WebSocket(`${url.replace('http', 'ws')}/gateway?v=10&encoding=json`)
  const frames: any[] = []
  ws.onmessage = (e) => frames.push(JSON.parse(String(e.data)))
  await new Promise((resolve) => (ws.onopen = resolve))
  ws.send(JSON.stringify({ op: 2, d: { token, properties: {} } }))
  while (!frames.some((f) => f.t === 'READY')) await Bun.sleep(20)
  const beat = setInterval(
    () => ws.send(JSON.stringify({ op: 1, d: null })),
    Math.min(frames[0].d.heartbeat_interval / 3, 1000),
  )
  const closed = new Promise<number>((resolve) => (ws.onclose = (e) => resolve(e.code)))
  const me = (await (await fetch(`${url}/api/v9/users/@me`, { headers: { authorization: token } })).json()) as {
    id: string
  }

  const locked = cli('user', 'lock', '--id', me.id)
  expect(locked.code).toBe(0)
  expect(JSON.parse(locked.stdout)).toMatchObject({ id: me.id, locked: true, sessions_ended: 1 })
  expect((await fetch(`${url}/api/v9/users/@me`, { headers: { authorization: token } })).status).toBe(401)
  expect(await closed).toBe(4004) // the server notices within its auth-session sweep (5 s)
  clearInterval(beat)
  proc.kill('SIGTERM')
  await proc.exited
}, 15_000)
