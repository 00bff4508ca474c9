// The compiled binary (scripts/build.ts, as `bun run build`) on PostgreSQL, as an operator runs it: DATABASE_URL
// alone (one server), then DATABASE_URL and REDIS_URL (two nodes of a cluster). Its PostgreSQL and cluster sides are
// chunks of the binary loaded on demand (db/postgres-side.ts, server.ts): a registration, a login, an app made with
// the binary's CLI, a lobby, a message and its Gateway event all go through them, and the rows are in PostgreSQL.
// Built once here; the SQLite pass runs it (the PostgreSQL pass would build and run the same thing again).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { call } from '../cluster/harness'
import { type RedisServer, redisServerPath, startRedis } from '../cluster/redis'
import { GatewayClient } from '../gateway-client'
import { onPostgres } from '../helpers'
import { cli, freshEnv, serve, type Served } from '../ops/process-helpers'
import { buildBinary } from '../web/target'
import { postgresBinDir, type TestDatabase, testDatabase } from './postgres'

const present = postgresBinDir() !== undefined && !onPostgres

let dir: string
let binary: string[]
const sockets: GatewayClient[] = []
const servers: Served[] = []
const databases: TestDatabase[] = []
let redis: RedisServer | undefined

beforeAll(() => {
  if (!present) return
  dir = mkdtempSync(join(tmpdir(), 'lobby-pg-binary-'))
  binary = [buildBinary(dir)]
}, 120_000)
afterAll(async () => {
  for (const s of sockets) s.close()
  await Promise.all(servers.filter((s) => s.proc.exitCode === null).map((s) => s.stop()))
  redis?.stop()
  for (const d of databases) await d.sql.end()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function database(): Promise<TestDatabase> {
  const made = await testDatabase()
  databases.push(made)
  return made
}

async function start(env: Record<string, string | undefined>): Promise<Served> {
  const served = await serve(env, [], binary)
  servers.push(served)
  return served
}

async function newApp(env: Record<string, string | undefined>) {
  const made = await cli(env, ['app', 'create', '--name', `Binary game ${Date.now()}`], undefined, binary)
  expect(made.stderr).toBe('')
  const app = JSON.parse(made.stdout)
  return { id: app.id as string, bot: `Bot ${app.bot_token}` }
}

async function socketOn(node: Served, token: string) {
  const { client, ready } = await GatewayClient.identified(token, {}, node.port)
  sockets.push(client)
  return { client, ready }
}

describe.skipIf(!present)('the compiled binary on PostgreSQL', () => {
  test('one server: register, login, an app from its CLI, a lobby, a message and its Gateway event, rows in PostgreSQL', async () => {
    const db = await database()
    const env = freshEnv({ DATABASE_URL: db.url }).env
    const node = await start(env)
    expect(node.output()).toContain(`database=${db.url}`)

    const email = `binary-${Date.now()}@example.test`
    const password = 'a binary on postgres passphrase'
    const registered = await call(node, 'POST', '/auth/register', undefined, {
      username: `binpg${Date.now().toString(36)}`,
      email,
      password,
      date_of_birth: '1990-01-01',
      consent: true,
    })
    expect(registered.status).toBe(200)
    const login = await call(node, 'POST', '/auth/login', undefined, { login: email, password })
    expect(login.status).toBe(200)
    const token = login.body.token as string
    const me = await call(node, 'GET', '/users/@me', token)
    expect(me.status).toBe(200)

    const app = await newApp(env)
    const lobby = await call(node, 'POST', '/lobbies', app.bot, { members: [{ id: me.body.id }] })
    expect(lobby.status).toBe(201)
    const { client, ready } = await socketOn(node, token)
    expect(ready.user.id).toBe(me.body.id)
    const sent = await call(node, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'from the binary' })
    expect(sent.status).toBe(201)
    const event = await client.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE', 5000)
    expect(event.d).toMatchObject({ id: sent.body.id, lobby_id: lobby.body.id, content: 'from the binary' })

    const [row] = await db.sql`SELECT content FROM lobby_messages WHERE id = ${sent.body.id}`
    expect(row).toEqual({ content: 'from the binary' })
    const [user] = await db.sql`SELECT email FROM users WHERE id = ${me.body.id}`
    expect(user).toEqual({ email })
  }, 60_000)

  test.skipIf(redisServerPath() === undefined)(
    'two nodes (REDIS_URL): a message posted through one reaches a socket on the other',
    async () => {
      const db = await database()
      redis = await startRedis()
      const env = freshEnv({ DATABASE_URL: db.url, REDIS_URL: redis.url }).env
      const [a, b] = [await start(env), await start(env)]
      const app = await newApp(env)
      const made = await cli(
        env,
        ['user', 'create', '--email', `node-${Date.now()}@example.test`, '--password', 'two binary nodes pass'],
        undefined,
        binary,
      )
      const user = JSON.parse(made.stdout) as { id: string; token: string }
      const lobby = await call(b, 'POST', '/lobbies', app.bot, { members: [{ id: user.id }] })
      expect(lobby.status).toBe(201)
      const { client } = await socketOn(a, user.token)
      const sent = await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, app.bot, { content: 'through b' })
      expect(sent.status).toBe(201)
      const event = await client.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE', 5000)
      expect(event.d).toMatchObject({ id: sent.body.id, content: 'through b' })
    },
    60_000,
  )
})
