// Rows through drizzle-orm/postgres-js and the twins' column kinds (db/pg/twins.ts) read back as the SQLite tables give them:
// JSON text parsed (and stored as the same characters), ms timestamps past 2^31 as JS numbers, booleans, identity
// ids; text ordered byte by byte as SQLite's BINARY collation does; the partial unique index on enforced nonces.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { asc, eq, sql } from 'drizzle-orm'
import { drizzle, type PostgresJsDatabase } from 'drizzle-orm/postgres-js'
import * as accounts from '../../src/accounts/tables'
import { pgTwin } from '../../src/db/pg/twins'
import * as lobbyTables from '../../src/lobbies/tables'
import * as oauth2 from '../../src/oauth2/tables'
import { type TestDatabase, testDatabase } from './postgres'

// The PostgreSQL twins of the declarations (db/pg/twins.ts), as a server on PostgreSQL uses them.
const users = pgTwin(accounts.users)
const applications = pgTwin(oauth2.applications)
const lobbies = pgTwin(lobbyTables.lobbies)
const lobbyEventDeliveries = pgTwin(lobbyTables.lobbyEventDeliveries)
const lobbyMessages = pgTwin(lobbyTables.lobbyMessages)

let database: TestDatabase
let db: PostgresJsDatabase

beforeAll(async () => {
  database = await testDatabase()
  db = drizzle({ client: database.sql, casing: 'snake_case' })
})
afterAll(() => database?.sql.end({ timeout: 1 }))

const now = 1_764_000_000_000 // past 2^31

test('a row reads back as the SQLite tables give it', async () => {
  await db.insert(users).values({ id: '10', username: 'ann', createdAt: now, flags: 2 ** 33 })
  await db
    .insert(applications)
    .values({ id: '20', name: 'app', botUserId: '10', botTokenHash: 'h', clientSecretHash: 's', createdAt: now })
  await db
    .insert(lobbies)
    .values({ id: '30', applicationId: '20', idleTimeoutSeconds: 300, metadata: { k: "it's" }, createdAt: now })
  const [user] = await db.select().from(users).where(eq(users.id, '10'))
  expect(user).toMatchObject({
    emailVerified: false,
    bot: false,
    flags: 2 ** 33,
    createdAt: now,
    locale: 'en-US',
    passwordWeak: null,
  })
  const [app] = await db.select().from(applications)
  expect(app.redirectUris).toEqual([])
  const [lobby] = await db.select().from(lobbies)
  expect(lobby).toMatchObject({ metadata: { k: "it's" }, createdVia: 'put', flags: 0, idleDeadline: null })
  const [{ text }] = await db.execute<{ text: string }>(sql`SELECT metadata AS text FROM lobbies`)
  expect(text).toBe('{"k":"it\'s"}')

  const ids = []
  for (const body of ['a', 'b']) {
    const [row] = await db
      .insert(lobbyEventDeliveries)
      .values({ lobbyId: '30', applicationId: '20', body, nextAttemptAt: now, createdAt: now })
      .returning()
    ids.push(row.id)
  }
  expect(ids[1]).toBe(ids[0] + 1)
})

test('text orders byte by byte, as SQLite does', async () => {
  for (const [id, username] of [
    ['11', 'B'],
    ['12', 'a'],
    ['13', 'é'],
    ['14', 'Z'],
  ])
    await db.insert(users).values({ id, username, createdAt: now })
  const rows = await db.select({ username: users.username }).from(users).orderBy(asc(users.username))
  expect(rows.map((r) => r.username)).toEqual(['B', 'Z', 'a', 'ann', 'é'])
})

test('enforced nonces are unique per lobby and author, other nonces are not', async () => {
  const message = (id: string, enforceNonce: boolean) => ({
    id,
    lobbyId: '30',
    applicationId: '20',
    authorId: '10',
    content: 'hi',
    nonce: 7,
    enforceNonce,
    createdAt: now,
  })
  await db.insert(lobbyMessages).values([message('100', false), message('101', false), message('102', true)])
  const duplicate = await db
    .insert(lobbyMessages)
    .values(message('103', true))
    .then(
      () => undefined,
      (error: { cause?: { code?: string } }) => error.cause?.code,
    )
  expect(duplicate).toBe('23505')
  const rows = await db
    .select({ id: lobbyMessages.id, nonce: lobbyMessages.nonce })
    .from(lobbyMessages)
    .orderBy(sql`CAST(${lobbyMessages.id} AS bigint) DESC`)
  expect(rows).toEqual([
    { id: '102', nonce: 7 },
    { id: '101', nonce: 7 },
    { id: '100', nonce: 7 },
  ])
})
