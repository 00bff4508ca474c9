// suite: one pass
// Data written by commit 8763035 (main before issue 41) is read and changed by today's code, on SQLite and on
// PostgreSQL: the databases of tests/db/fixtures/ (made once by make-8763035.ts with that commit's code, see
// 8763035.json) are opened by a server of this tree, which applies only the migrations made since (columns added,
// no table rewritten); then users, the application and its bot, the OAuth2 grant, the guild, the lobby with its
// members and messages read as that commit wrote them, and a message posted, a lobby patched and a new grant work.
// The server runs in a process of its own with its clock at the fixture's time (tokens and idle deadlines hold).
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { embeddedMigrations } from '../../src/db/migrate'
import { embeddedPgMigrations } from '../../src/db/pg/migrate'
import { postgresBinDir, testDatabase } from './postgres'
import { ROOT } from './schema-shape'

const FIXTURES = join(import.meta.dir, 'fixtures')
type Seed = {
  madeAt: number
  application: { id: string; name: string; bot: string }
  users: { id: string; username: string; token: string; bearer: string }[]
  guild: { id: string; name: string }
  lobby: { id: string }
  messages: { id: string; content: string }[]
}
const made = (await Bun.file(join(FIXTURES, '8763035.json')).json()) as { sqlite: Seed; postgres: Seed }

const dir = mkdtempSync(join(tmpdir(), 'lobby-old-data-'))
const servers: Bun.Subprocess[] = []
afterAll(() => {
  for (const proc of servers) proc.kill()
  rmSync(dir, { recursive: true, force: true })
})

/** A server of this tree on the database, its clock a minute after the seed ran; its base URL. */
async function serve(database: { databasePath: string } | { databaseUrl: string }, seed: Seed): Promise<string> {
  const script = join(dir, `serve-${servers.length}.ts`)
  writeFileSync(
    script,
    `const { clock } = await import(${JSON.stringify(join(ROOT, 'src/core/clock.ts'))})
clock.advance(${seed.madeAt + 60_000} - Date.now())
const { startServer } = await import(${JSON.stringify(join(ROOT, 'src/server.ts'))})
const running = await startServer({ port: 0, host: '127.0.0.1', ...${JSON.stringify(database)} })
console.log(JSON.stringify({ url: running.url }))
await Bun.stdin.text()
await running.stop()
process.exit(0)
`,
  )
  const proc = Bun.spawn([process.execPath, script], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: '', REDIS_URL: '', LOG_LEVEL: 'silent' },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  servers.push(proc)
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the server exited (${await proc.exited}) before it answered`)
    text += new TextDecoder().decode(value)
  }
  return (JSON.parse(text.split('\n')[0]) as { url: string }).url
}

async function call(base: string, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${base}/api/v9${path}`, {
    method,
    headers: {
      ...(token ? { authorization: token } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

/** A migration that rewrites a table (drizzle-kit's SQLite copy through `__new_x`, a DROP, a RENAME) would show here. */
const REWRITES = /DROP TABLE|__new_|RENAME TO|ALTER COLUMN .* TYPE/i
/**
 * The one rewrite allowed, and why: SQLite's `channels` rebuilt once so that guild_id may be null (DM channels, issue
 * 45). It copies the channels' rows only (a few per guild); db/migrate.ts runs it with foreign keys off, so their
 * messages, reactions and invites stay (tests/db/sqlite-rebuild.test.ts, and the channel read below).
 */
const ALLOWED_REWRITE = /__new_channels|^DROP TABLE `channels`;|^PRAGMA foreign_keys=(OFF|ON);/
const checked = (sql: string[]) => sql.filter((statement) => !ALLOWED_REWRITE.test(statement.trim())).join('\n')

/** What both databases must answer after the upgrade. */
function readAndChange(seed: Seed, base: () => string) {
  const [a, b] = seed.users
  const bot = seed.application.bot

  test('users, the bot and the application read as 8763035 wrote them', async () => {
    const me = await call(base(), 'GET', '/users/@me', a.token)
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: a.id, username: a.username })
    const app = await call(base(), 'GET', '/oauth2/applications/@me', bot)
    expect(app.status).toBe(200)
    expect(app.body).toMatchObject({ id: seed.application.id, name: seed.application.name })
  })

  test('the lobby, its members and its messages read as written', async () => {
    const lobby = await call(base(), 'GET', `/lobbies/${seed.lobby.id}`, bot)
    expect(lobby.status).toBe(200)
    expect(lobby.body.metadata).toEqual({ mode: 'ranked', region: 'eu' })
    const members = Object.fromEntries(
      (lobby.body.members as { id: string; metadata: unknown; flags: number }[]).map((m) => [m.id, m]),
    )
    expect(members[a.id]).toMatchObject({ metadata: { team: 'red' }, flags: 0 })
    expect(members[b.id]).toMatchObject({ flags: 1 })
    const messages = await call(base(), 'GET', `/lobbies/${seed.lobby.id}/messages`, a.bearer)
    expect(messages.status).toBe(200)
    expect((messages.body as { id: string; content: string }[]).map((m) => [m.id, m.content])).toEqual(
      seed.messages.map((m) => [m.id, m.content]).reverse(),
    )
    expect(messages.body[0].metadata).toEqual({ k: 'v' })
    const roles = await call(base(), 'GET', `/guilds/${seed.guild.id}/roles`, a.token)
    expect(roles.status).toBe(200)
    expect((roles.body as { id: string }[]).map((r) => r.id)).toContain(seed.guild.id) // @everyone
    // The guild's channels (SQLite's table rebuilt since: issue 45) read as written, and take a message.
    const channels = await call(base(), 'GET', `/guilds/${seed.guild.id}/channels`, a.token)
    expect(channels.status).toBe(200)
    const text = (channels.body as { id: string; type: number; guild_id: string }[]).find((c) => c.type === 0)!
    expect(text.guild_id).toBe(seed.guild.id)
    const sent = await call(base(), 'POST', `/channels/${text.id}/messages`, a.token, { content: 'after the upgrade' })
    expect(sent.status).toBe(200)
    const page = await call(base(), 'GET', `/channels/${text.id}/messages`, a.token)
    expect((page.body as { id: string }[]).map((m) => m.id)).toEqual([sent.body.id])
  })

  test('a message is posted, the lobby patched, and a new OAuth2 grant works', async () => {
    const posted = await call(base(), 'POST', `/lobbies/${seed.lobby.id}/messages`, a.bearer, { content: 'new' })
    expect(posted.status).toBe(201)
    const page = await call(base(), 'GET', `/lobbies/${seed.lobby.id}/messages`, a.bearer)
    expect((page.body as { content: string }[]).map((m) => m.content)).toEqual([
      'new',
      ...seed.messages.map((m) => m.content).reverse(),
    ])
    const patched = await call(base(), 'PATCH', `/lobbies/${seed.lobby.id}`, bot, {
      metadata: { mode: 'casual' },
      override_event_webhooks_url: null,
    })
    expect(patched.status).toBe(200)
    expect(patched.body.metadata).toEqual({ mode: 'casual' })
    expect((await call(base(), 'GET', `/lobbies/${seed.lobby.id}`, bot)).body.members).toHaveLength(2)

    // Another grant for b through the old application (oauth2_codes gained a column since 8763035).
    const query = new URLSearchParams({
      client_id: seed.application.id,
      response_type: 'code',
      redirect_uri: 'http://localhost/callback',
      scope: 'identify lobbies.write',
    })
    const authorized = await call(base(), 'POST', `/oauth2/authorize?${query}`, b.token, { authorize: true })
    expect(authorized.status).toBe(200)
    expect(new URL(authorized.body.location).searchParams.get('code')).toBeString()
  })
}

describe('SQLite: a database written by 8763035', () => {
  const path = join(dir, 'old.sqlite')
  let base = ''
  let before = 0

  test('opens: only the migrations made since run, and none rewrites a table', async () => {
    writeFileSync(path, Bun.gunzipSync(await Bun.file(join(FIXTURES, '8763035.sqlite.gz')).bytes()))
    const count = () => {
      const handle = new Database(path, { readonly: true })
      try {
        return (handle.query('SELECT count(*) AS n FROM __drizzle_migrations').get() as { n: number }).n
      } finally {
        handle.close()
      }
    }
    before = count()
    base = await serve({ databasePath: path }, made.sqlite)
    const all = embeddedMigrations()
    expect(before).toBeGreaterThan(0)
    expect(before).toBeLessThan(all.length)
    expect(count()).toBe(all.length)
    for (const m of all.slice(before)) expect(`${m.tag}: ${checked(m.sql)}`).not.toMatch(REWRITES)
  }, 60_000)

  readAndChange(made.sqlite, () => base)
})

describe('PostgreSQL: a database written by 8763035', () => {
  let base = ''

  test('opens: only the migrations made since run, and none rewrites a table', async () => {
    const database = await testDatabase({ empty: true })
    const psql = Bun.spawnSync(
      [
        join(postgresBinDir()!, 'psql'),
        '-q',
        '-v',
        'ON_ERROR_STOP=1',
        '-f',
        join(FIXTURES, '8763035.pg.sql'),
        database.url,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    expect(psql.stderr.toString()).toBe('')
    expect(psql.exitCode).toBe(0)
    const count = async () =>
      (await database.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`)[0].n
    const before = await count()
    base = await serve({ databaseUrl: database.url }, made.postgres)
    const all = embeddedPgMigrations()
    expect(before).toBeGreaterThan(0)
    expect(before).toBeLessThan(all.length)
    expect(await count()).toBe(all.length)
    for (const m of all.slice(before)) expect(`${m.tag}: ${m.sql.join('\n')}`).not.toMatch(REWRITES)
    await database.sql.end()
  }, 60_000)

  readAndChange(made.postgres, () => base)
})
