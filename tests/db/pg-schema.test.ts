// One declaration per table (src/**/tables.ts, through db/table.ts) gives both databases' tables, and both sets of
// migrations were generated from it:
// - every exported table is declared with `table()` and the kinds of db/table.ts, so it has a PostgreSQL twin;
// - each twin (db/pg/twins.ts) matches its SQLite table: the same columns in the same order (name, kind, nullability,
//   default, primary key, unique), primary keys, unique constraints, indexes (columns, expressions, partial WHERE)
//   and foreign keys, as Drizzle's getTableConfig gives them for each dialect, with each kind's PostgreSQL column;
// - the declarations are what the migrations of drizzle/ and drizzle-pg/ left: drizzle-kit's own diff of each last
//   snapshot against the declarations is empty, so `bun run db:generate` would write no migration. A field declared
//   without its migration fails here.
// The row types of the twins are SQLite's (db/pg/twins.ts PgTwin), checked by `bun run typecheck`.
import { describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { type Table } from 'drizzle-orm'
import { getTableConfig as pgConfig, type PgTable } from 'drizzle-orm/pg-core'
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core'
import {
  generateDrizzleJson,
  generateMigration,
  generateSQLiteDrizzleJson,
  generateSQLiteMigration,
} from 'drizzle-kit/api'
import * as accounts from '../../src/accounts/tables'
import { pgTwin } from '../../src/db/pg/twins'
import { declarationOf, long, table, text } from '../../src/db/table'
import { pgModules, ROOT, shapeOf, sqliteModules } from './schema-shape'

const sqlite = await sqliteModules()
const pg = await pgModules()

const pairs = sqlite.flatMap(({ file, tables }) => {
  const twins = pg.find((m) => m.file === file)!.tables
  return [...tables].map(([exportName, table]) => ({
    label: `${file} ${exportName}`,
    sqlite: table,
    pg: twins.get(exportName)!,
  }))
})

test('every table of src/**/tables.ts is declared with db/table.ts table()', () => {
  expect(pairs.length).toBeGreaterThanOrEqual(38)
  expect(pairs.filter((p) => !declarationOf(p.sqlite)).map((p) => p.label)).toEqual([])
})

describe('each twin matches its SQLite table', () => {
  test.each(pairs.map((p) => [p.label, p] as const))('%s', (_label, pair) => {
    expect(shapeOf(pair.pg)).toEqual(shapeOf(pair.sqlite))
  })
})

test('PostgreSQL column kinds: byte-ordered text, ms timestamps as bigint', () => {
  for (const { pg: table } of pairs) {
    for (const column of pgConfig(table as PgTable).columns) {
      const where = `${pgConfig(table as PgTable).name}.${column.name}`
      expect(`${where} ${column.getSQLType()}`).toMatch(/ (text COLLATE "C"|boolean|integer|bigint)$/)
      if (/(At|Deadline|Until)$/.test(column.name)) expect(`${where} ${column.getSQLType()}`).toBe(`${where} bigint`)
    }
  }
})

/** The last snapshot drizzle-kit wrote in a migrations folder (what the next `db:generate` compares with). */
async function lastSnapshot(folder: string): Promise<{ id: string }> {
  const meta = join(ROOT, folder, 'meta')
  const last = readdirSync(meta)
    .filter((f) => f.endsWith('_snapshot.json'))
    .sort()
    .at(-1)!
  return Bun.file(join(meta, last)).json()
}

type Snapshot = Parameters<typeof generateMigration>[0]
type SQLiteSnapshot = Parameters<typeof generateSQLiteMigration>[0]

/** The statements `db:generate` would write for these tables, on each dialect. */
async function pending(sqliteTables: Table[], pgTables: Table[]): Promise<{ sqlite: string[]; pg: string[] }> {
  const byIndex = (tables: Table[]) => Object.fromEntries(tables.map((t, i) => [`t${i}`, t]))
  const sqlitePrev = (await lastSnapshot('drizzle')) as SQLiteSnapshot
  const pgPrev = (await lastSnapshot('drizzle-pg')) as Snapshot
  const sqliteNow = await generateSQLiteDrizzleJson(byIndex(sqliteTables), sqlitePrev.id, 'snake_case')
  const pgNow = generateDrizzleJson(byIndex(pgTables), pgPrev.id, undefined, 'snake_case')
  return {
    sqlite: await generateSQLiteMigration(sqlitePrev, sqliteNow),
    pg: await generateMigration(pgPrev, pgNow),
  }
}

const declared = () => ({ sqlite: pairs.map((p) => p.sqlite), pg: pairs.map((p) => p.pg) })

test('the migrations of both databases hold the declarations: db:generate has nothing to write', async () => {
  const { sqlite, pg } = declared()
  expect(await pending(sqlite, pg)).toEqual({ sqlite: [], pg: [] })
})

test('a field declared without its migration is noticed on both databases, and by the shape comparison', async () => {
  // users with one more field, declared as a new field is (the same columns, one more last).
  const { sqlite, pg } = declared()
  const users = table('users', { ...declarationOf(accounts.users)!.columns, nickname: text(), seenAt: long() })
  const found = await pending(
    sqlite.map((t) => (t === accounts.users ? users : t)),
    pg.map((t) => (t === (pgTwin(accounts.users) as unknown as Table) ? (pgTwin(users) as unknown as Table) : t)),
  )
  expect(found.sqlite).toEqual([
    'ALTER TABLE `users` ADD `nickname` text;',
    'ALTER TABLE `users` ADD `seen_at` integer;',
  ])
  expect(found.pg).toEqual([
    'ALTER TABLE "users" ADD COLUMN "nickname" text COLLATE "C";',
    'ALTER TABLE "users" ADD COLUMN "seen_at" bigint;',
  ])

  const [pair] = pairs.filter((p) => p.label.endsWith('serverSecrets'))
  const expected = shapeOf(pair.pg)
  const otherKinds = sqliteTable('server_secrets', { name: integer().primaryKey(), value: integer().notNull() })
  expect(shapeOf(otherKinds)).not.toEqual(expected)
  const withExtra = { ...shapeOf(pair.sqlite) }
  withExtra.columns = [...withExtra.columns, { ...withExtra.columns[1], name: 'rotated_at' }]
  expect(withExtra).not.toEqual(expected)
})
