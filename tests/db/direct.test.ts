// `prepared()` runs Drizzle's prepared statements through `direct()` (db/client.ts), which reads a prepared query's
// internals (`stmt`, `query.params`, `fields`, `joinsNotNullableMap`): fast, but not Drizzle's public API. When a
// Drizzle upgrade changes those, direct() falls back to Drizzle's own methods silently (correct, slower). These tests
// make the upgrade visible instead: direct() must take over each shape the stores use, and answer what Drizzle does.
import { describe, expect, test } from 'bun:test'
import { and, eq, sql } from 'drizzle-orm'
import { oneTimeTokens, users } from '../../src/accounts/tables'
import { snowflake } from '../../src/core/snowflake'
import { db, jsonPlaceholder, prepared, toJson, write } from '../../src/db/client'
import { onPostgres, server } from '../helpers'

const ph = (name: string) => sql.placeholder(name)

/** direct() took over: its own get/all/run/values on the query, Drizzle's prepared query as the prototype. */
function isDirect(query: object, methods: string[]): boolean {
  return methods.every((m) => Object.hasOwn(query, m))
}

const userById = prepared((d) =>
  d
    .select()
    .from(users)
    .where(eq(users.id, ph('id')))
    .prepare(),
)
const userFields = prepared((d) =>
  d
    .select({ id: users.id, bot: users.bot, weak: users.passwordWeak, made: sql<number>`${users.createdAt} + 1` })
    .from(users)
    .where(and(eq(users.id, ph('id')), eq(users.bot, false)))
    .prepare(),
)
const tokenInsert = prepared((d) =>
  d
    .insert(oneTimeTokens)
    .values({
      tokenHash: ph('hash'),
      purpose: ph('purpose'),
      createdAt: ph('createdAt'),
      userId: ph('userId'),
      data: jsonPlaceholder('data'),
      expiresAt: ph('expiresAt'),
    })
    .returning()
    .prepare(),
)
const tokenByHash = prepared((d) =>
  d
    .select()
    .from(oneTimeTokens)
    .where(eq(oneTimeTokens.tokenHash, ph('hash')))
    .prepare(),
)

describe.skipIf(onPostgres)(
  'prepared statements run by direct() (SQLite only, skipped on PostgreSQL: direct() runs bun:sqlite statements)',
  () => {
    test('a select of whole rows, of chosen fields and SQL, and an insert returning: direct() takes each over', async () => {
      await server()
      const id = snowflake()
      await write((w) =>
        w
          .insert(users)
          .values({ id, username: `direct${id}`, createdAt: 1_700_000_000_123, passwordWeak: true })
          .run(),
      )
      const byDrizzle = await db().select().from(users).where(eq(users.id, id)).get()
      const whole = userById()
      expect(isDirect(whole as object, ['get', 'all', 'values', 'run'])).toBe(true)
      expect(await whole.get({ id })).toEqual(byDrizzle!)
      expect(await whole.all({ id })).toEqual([byDrizzle!])
      expect(byDrizzle?.bot).toBe(false) // a boolean column decoded, not 0
      expect(await whole.get({ id: 'none' })).toBeUndefined()

      const fields = userFields()
      expect(isDirect(fields as object, ['get', 'all'])).toBe(true)
      expect(await fields.get({ id })).toEqual({ id, bot: false, weak: true, made: 1_700_000_000_124 })

      const hash = `h${id}`
      const insert = await write(() => tokenInsert())
      expect(isDirect(insert as object, ['get', 'run'])).toBe(true)
      const inserted = await write(() =>
        insert.get({ hash, purpose: 'direct-test', createdAt: 4, userId: id, data: toJson({ a: 'b' }), expiresAt: 5 }),
      )
      const read = await tokenByHash().get({ hash })
      expect(inserted).toEqual(read!)
      expect(read?.data).toEqual({ a: 'b' }) // a JSON column decoded
      expect(read).toEqual((await db().select().from(oneTimeTokens).where(eq(oneTimeTokens.tokenHash, hash)).get())!)
    })
  },
)
