// One in-process server per test process, on a free port with a temporary database.
// Tests create their own users and applications, so files never depend on each other's data.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setRawDatabaseUrl } from './db/raw'
import { createSession } from '../src/accounts/sessions'
import { clock } from '../src/core/clock'
import { resetRateLimits } from '../src/core/ratelimit'
import { resetRouteLimits } from '../src/http/rate-limits'
import { createApplication } from '../src/oauth2/applications'
import { startServer, type Running } from '../src/server'
import { hashPassword } from '../src/accounts/passwords'
import { insertUser } from '../src/accounts/store'
import { snowflake } from '../src/core/snowflake'
import { config } from '../src/config'

const key = Symbol.for('lobby-server.test-server')
type Holder = { [key]?: Promise<Running> }

export function testDir(): string {
  return mkdtempSync(join(tmpdir(), 'lobby-test-'))
}

/** The shared test server (started on first call). */
/** TEST_DATABASE=postgres runs the suite against PostgreSQL (tests/db/postgres.ts); else SQLite. */
export const onPostgres = process.env.TEST_DATABASE === 'postgres'

/** Where the test server keeps its rows: a file in the test dir, or a database of the run's PostgreSQL server. */
async function testDatabaseConfig(): Promise<{ databasePath: string } | { databaseUrl: string }> {
  if (!onPostgres) return { databasePath: join(testDir(), 'test.sqlite') }
  const { testDatabase } = await import('./db/postgres')
  const database = await testDatabase()
  await database.sql.end()
  setRawDatabaseUrl(database.url)
  return { databaseUrl: database.url }
}

export function server(): Promise<Running> {
  const holder = globalThis as Holder
  holder[key] ??= (async () => startServer({ port: 0, host: '127.0.0.1', ...(await testDatabaseConfig()) }))()
  return holder[key]!
}

export type Reply<T = any> = { status: number; body: T; headers: Headers }

/**
 * Call the REST API. `token` is sent as-is in Authorization (prefix Bot/Bearer yourself). Like Discord's libraries,
 * it waits out a per-route 429 (X-RateLimit-Scope) and tries again, unless `rateLimited: 'return'`; the limits that
 * protect accounts (429 without that header) are returned as they are.
 */
export async function api<T = any>(
  method: string,
  path: string,
  options: {
    token?: string
    body?: unknown
    raw?: string
    headers?: Record<string, string>
    rateLimited?: 'wait' | 'return'
  } = {},
): Promise<Reply<T>> {
  for (let attempt = 0; ; attempt++) {
    const reply = await apiOnce<T>(method, path, options)
    if (
      reply.status !== 429 ||
      !reply.headers.get('x-ratelimit-scope') ||
      options.rateLimited === 'return' ||
      attempt >= 50
    )
      return reply
    await Bun.sleep(Math.ceil(Number((reply.body as { retry_after?: number })?.retry_after ?? 0.1) * 1000) + 5)
  }
}

async function apiOnce<T>(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> },
): Promise<Reply<T>> {
  const { url } = await server()
  const headers: Record<string, string> = { ...options.headers }
  if (options.token) headers.authorization = options.token
  let body: string | undefined
  if (options.raw !== undefined) body = options.raw
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers['content-type'] ??= 'application/json'
  const response = await fetch(
    `${url}${path.startsWith('/api') || path.startsWith('/healthz') ? '' : '/api/v9'}${path}`,
    { method, headers, body },
  )
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : null
  } catch {}
  return { status: response.status, body: parsed as T, headers: response.headers }
}

let counter = 0
function unique(prefix: string): string {
  counter += 1
  return `${prefix}${Date.now().toString(36)}${counter}${Math.random().toString(36).slice(2, 6)}`
}

/** A verified user with a session token. */
// argon2id costs tens of milliseconds of CPU a hash, and most tests' users share one password: its hash is made once
// per process (a salt shared by test users is harmless; login still verifies it as it verifies any hash).
const DEFAULT_PASSWORD = 'correct horse battery staple'
let defaultHash: Promise<string> | undefined
const hashOf = (password: string) =>
  password === DEFAULT_PASSWORD ? (defaultHash ??= hashPassword(password)) : hashPassword(password)

export async function makeUser(
  options: { password?: string } = {},
): Promise<{ id: string; token: string; email: string; password: string; username: string }> {
  await server()
  const name = unique('u')
  const password = options.password ?? DEFAULT_PASSWORD
  const email = `${name}@example.test`
  const user = await insertUser({
    id: snowflake(),
    username: name,
    email,
    emailVerified: true,
    passwordHash: await hashOf(password),
    createdAt: clock.now(),
  })
  const { token } = await createSession(user.id, { platform: 'test' })
  return { id: user.id, token, email, password, username: user.username }
}

/** An application with its bot token and client secret. */
export async function makeApp(redirectUris: string[] = ['http://localhost/callback']) {
  await server()
  return createApplication(unique('app'), redirectUris)
}

/** Undo clock moves and rate-limit counts between tests. */
export function resetWorld(): void {
  clock.reset()
  resetRateLimits()
  resetRouteLimits()
}

/** The environment that points a child process (the CLI) at the test server's database. */
export function databaseEnv(): Record<string, string> {
  const { databasePath, databaseUrl } = config()
  return databaseUrl ? { DATABASE_URL: databaseUrl } : { DATABASE_PATH: databasePath }
}
