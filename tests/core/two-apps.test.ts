// Two services in one process, each its own App (core/app.ts) on its own database — two SQLite files, or two
// databases of the test's PostgreSQL server, each with its own pool, listener and group-commit queue: they share
// nothing — accounts, tokens, lobbies, Gateway sessions and events, security limits, caches — and stopping one
// leaves the other serving (on PostgreSQL: its pool open, its transactions and NOTIFYs its own).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createSession } from '../../src/accounts/sessions'
import { createVerifiedUser } from '../../src/accounts/users'
import { type App, newApp } from '../../src/core/app'
import { dataVersion } from '../../src/db/client'
import { gatewayStats } from '../../src/gateway/server'
import { createApplication } from '../../src/oauth2/applications'
import { type Running, startServer } from '../../src/server'
import { onPostgres } from '../helpers'
import postgres from 'postgres'

/** `rows(sql)`: what the service's own database holds, read around the service (a file, or a PostgreSQL database). */
type Service = {
  name: string
  context: App
  running: Running
  rows: (query: string) => Promise<unknown[]>
  /**
   * Another process commits to the service's database (SQLite: a write on a connection of its own; PostgreSQL: the
   * CLI's NOTIFY).
   */
  foreignCommit: () => Promise<void>
  bot: string
  token: string
}

const dir = mkdtempSync(join(tmpdir(), 'two-apps-'))
let first: Service
let second: Service

/** A database of its own: a file, or on PostgreSQL a database of the test's server (tests/db/postgres.ts). */
async function database(name: string) {
  if (!onPostgres) {
    const path = join(dir, `${name}.sqlite`)
    const rows = async (query: string) => {
      const db = new Database(path, { readonly: true })
      try {
        return db.query(query).all()
      } finally {
        db.close()
      }
    }
    const foreignCommit = async () => {
      const db = new Database(path)
      try {
        db.exec('CREATE TABLE two_apps_touch (x INTEGER); DROP TABLE two_apps_touch')
      } finally {
        db.close()
      }
    }
    return { config: { databasePath: path, databaseUrl: undefined }, rows, foreignCommit }
  }
  const { testDatabase } = await import('../db/postgres')
  const made = await testDatabase()
  await made.sql.end()
  const rows = async (query: string) => {
    const sql = postgres(made.options({ max: 1 }))
    try {
      return [...(await sql.unsafe(query))]
    } finally {
      await sql.end()
    }
  }
  const foreignCommit = async () => {
    const { CHANGES_CHANNEL } = await import('../../src/db/pg/client')
    const sql = postgres(made.options({ max: 1 }))
    try {
      await sql.notify(CHANGES_CHANNEL, '')
    } finally {
      await sql.end()
    }
  }
  return { config: { databaseUrl: made.url }, rows, foreignCommit }
}

async function start(name: string, context: App): Promise<Service> {
  const db = await database(name)
  const running = await startServer({ port: 0, host: '127.0.0.1', ...db.config }, context)
  const { app, token } = await context.enter(async () => {
    const user = await createVerifiedUser({
      email: `${name}@example.test`,
      password: 'correct horse battery staple',
      username: name,
    })
    const session = await createSession(user.id, { platform: 'test' })
    return { app: await createApplication(`${name} app`, ['http://localhost/callback']), token: session.token }
  })
  return { name, context, running, rows: db.rows, foreignCommit: db.foreignCommit, bot: `Bot ${app.bot_token}`, token }
}

async function call(s: Service, method: string, path: string, token?: string, body?: unknown) {
  const response = await fetch(`${s.running.url}/api/v10${path}`, {
    method,
    headers: { ...(token ? { authorization: token } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null }
}

/** A bot's Gateway socket: identified, recording the dispatches it receives. */
async function botSocket(s: Service) {
  const ws = new WebSocket(`${s.running.url.replace('http', 'ws')}/gateway?v=10&encoding=json`)
  const events: { t: string; d: any }[] = []
  const ready = new Promise<void>((resolve, reject) => {
    ws.onmessage = (m) => {
      const p = JSON.parse(String(m.data))
      if (p.op === 10) ws.send(JSON.stringify({ op: 2, d: { token: s.bot, intents: 0, properties: {} } }))
      if (p.op === 0) {
        events.push({ t: p.t, d: p.d })
        if (p.t === 'READY') resolve()
      }
      if (p.op === 9) reject(new Error('invalid session'))
    }
    ws.onerror = () => reject(new Error('socket error'))
  })
  await ready
  return { ws, events: (t: string) => events.filter((e) => e.t === t).map((e) => e.d) }
}

// Both in contexts of their own: the root context holds the server of the other test files (one bun process runs
// them all), which goes on serving beside these two.
describe('two services in one process on two databases', () => {
  // On PostgreSQL the first start may start the test's server (initdb) and makes two databases: past bun's 5 s on a
  // loaded machine when the file runs alone (the suite runs with 20 s).
  beforeAll(async () => {
    first = await start('first', newApp('first'))
    second = await start('second', newApp('second'))
  }, 30_000)
  afterAll(async () => {
    await second?.running.stop()
    await first?.running.stop()
  })

  test('each App holds its own database connections', () => {
    // What db/ declared in AppState, read off the typed App: two files, or two pools and two listeners.
    const [a, b] = [first.context.state, second.context.state]
    if (onPostgres) {
      expect(a.postgres?.pool).toBeDefined()
      expect(a.postgres?.pool).not.toBe(b.postgres?.pool)
      expect(a.postgres?.listener).toBeDefined()
      expect(a.postgres?.listener).not.toBe(b.postgres?.listener)
    } else {
      expect(a.database?.writer).toBeDefined()
      expect(a.database?.file).not.toBe(b.database?.file)
    }
  })

  test('an account, its token and its rows belong to one service', async () => {
    expect((await call(first, 'GET', '/users/@me', first.token)).body.username).toBe('first')
    expect((await call(second, 'GET', '/users/@me', second.token)).body.username).toBe('second')
    // Each token is unknown to the other service (its token cache included: asked right after a hit there).
    expect((await call(second, 'GET', '/users/@me', first.token)).status).toBe(401)
    expect((await call(first, 'GET', '/users/@me', second.token)).status).toBe(401)
    const users = "SELECT username FROM users WHERE username IN ('first', 'second')"
    expect(await first.rows(users)).toEqual([{ username: 'first' }])
    expect(await second.rows(users)).toEqual([{ username: 'second' }])
  })

  test('lobbies and their Gateway events stay in their service', async () => {
    const sockets = [await botSocket(first), await botSocket(second)]
    const one = (await call(first, 'POST', '/lobbies', first.bot, { metadata: { n: '1' } })).body
    const two = (await call(second, 'POST', '/lobbies', second.bot, { metadata: { n: '2' } })).body
    expect(one.id).toBeString()
    expect(two.id).toBeString()
    // Read twice: the second answer comes from the lobby cache, which is the service's own.
    for (let i = 0; i < 2; i++) {
      expect((await call(first, 'GET', `/lobbies/${one.id}`, first.bot)).status).toBe(200)
      expect((await call(second, 'GET', `/lobbies/${one.id}`, second.bot)).status).toBe(404)
      expect((await call(first, 'GET', `/lobbies/${two.id}`, first.bot)).status).toBe(404)
    }
    await Bun.sleep(100)
    expect(sockets[0].events('LOBBY_CREATE').map((l) => l.id)).toEqual([one.id])
    expect(sockets[1].events('LOBBY_CREATE').map((l) => l.id)).toEqual([two.id])
    // Each service counts only its own sockets.
    expect(first.context.enter(() => gatewayStats().connections)).toBe(1)
    expect(second.context.enter(() => gatewayStats().connections)).toBe(1)
    for (const s of sockets) s.ws.close()
  })

  test('a security limit counts in one service only', async () => {
    const login = (s: Service) =>
      call(s, 'POST', '/auth/login', undefined, { login: 'first@example.test', password: 'wrong password!' })
    let limited = 0
    for (let i = 0; i < 30 && limited === 0; i++) if ((await login(first)).status === 429) limited = i
    expect(limited).toBeGreaterThan(0)
    expect((await login(first)).status).toBe(429)
    // The other service has no such account and has counted nothing: a plain refusal, not a 429.
    expect((await login(second)).status).toBe(400)
  })

  test("another process's commit is seen by the service on that database only", async () => {
    const versions = () => [first.context.enter(() => dataVersion()), second.context.enter(() => dataVersion())]
    const [a, b] = versions()
    await first.foreignCommit()
    for (let i = 0; i < 100 && versions()[0] === a; i++) await Bun.sleep(10)
    expect(versions()[0]).not.toBe(a)
    await Bun.sleep(50) // a NOTIFY that reached the wrong listener would have arrived by now
    expect(versions()[1]).toBe(b)
  })

  test('stopping one service leaves the other serving', async () => {
    await second.running.stop()
    expect(second.context.isClosed).toBe(true)
    expect((await call(first, 'GET', '/users/@me', first.token)).status).toBe(200)
    // A write (a group-commit batch on PostgreSQL, on the first service's own pool) and reads after it.
    const lobby = (await call(first, 'POST', '/lobbies', first.bot, {})).body
    expect((await call(first, 'GET', `/lobbies/${lobby.id}`, first.bot)).status).toBe(200)
    expect(await first.rows(`SELECT id FROM lobbies WHERE id = '${lobby.id}'`)).toEqual([{ id: lobby.id }])
    // The stopped one's database is closed (its file unlocked, its pool ended), and was never written by the other.
    expect(await second.rows(`SELECT id FROM lobbies WHERE id = '${lobby.id}'`)).toEqual([])
  })
})
