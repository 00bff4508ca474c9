// The PostgreSQL tables (src/**/tables.pg.ts) mirror the SQLite ones (src/**/tables.ts): same tables under the same
// export names, and table by table the same columns (name, kind, nullability, default, primary key, unique), primary
// keys, unique constraints, indexes (columns, expressions, partial WHERE) and foreign keys, as Drizzle's
// getTableConfig gives them for each dialect. Adding a column, an index or a table to one side only fails here.
// The row types are checked too (by `bun run typecheck`): the same TypeScript rows on both, so one store can serve both.
import { describe, expect, test } from 'bun:test'
import { getTableConfig as pgConfig, type PgTable } from 'drizzle-orm/pg-core'
import { integer, sqliteTable } from 'drizzle-orm/sqlite-core'
import type * as accounts from '../../src/accounts/tables'
import type * as accountsPg from '../../src/accounts/tables.pg'
import type * as auth from '../../src/auth/tables'
import type * as authPg from '../../src/auth/tables.pg'
import type * as db from '../../src/db/tables'
import type * as dbPg from '../../src/db/tables.pg'
import type * as delivery from '../../src/delivery/tables'
import type * as deliveryPg from '../../src/delivery/tables.pg'
import type * as experiments from '../../src/experiments/tables'
import type * as experimentsPg from '../../src/experiments/tables.pg'
import type * as guilds from '../../src/guilds/tables'
import type * as guildsPg from '../../src/guilds/tables.pg'
import type * as lobbies from '../../src/lobbies/tables'
import type * as lobbiesPg from '../../src/lobbies/tables.pg'
import type * as mfa from '../../src/mfa/tables'
import type * as mfaPg from '../../src/mfa/tables.pg'
import type * as oauth2 from '../../src/oauth2/tables'
import type * as oauth2Pg from '../../src/oauth2/tables.pg'
import type * as remoteAuth from '../../src/remote-auth/tables'
import type * as remoteAuthPg from '../../src/remote-auth/tables.pg'
import { mirrorTables } from '../../src/db/pg/client'
import { modules } from '../../src/modules'
import { pgModules, shapeOf, sqliteModules } from './schema-shape'

const sqlite = await sqliteModules()
const pg = await pgModules()

const pairs = sqlite.flatMap(({ file, tables }) => {
  const mirror = pg.find((m) => m.file === file.replace(/tables\.ts$/, 'tables.pg.ts'))
  return [...tables].map(([exportName, table]) => ({
    label: `${file} ${exportName}`,
    sqlite: table,
    pg: mirror?.tables.get(exportName),
  }))
})

test('every tables.ts has a tables.pg.ts exporting the same tables under the same names, and no more', () => {
  const list = (modules: typeof sqlite) =>
    modules.map(({ file, tables }) => `${file.replace(/\.pg\.ts$/, '.ts')}: ${[...tables.keys()].sort().join(' ')}`)
  expect(list(pg)).toEqual(list(sqlite))
  expect(pairs.length).toBeGreaterThanOrEqual(34)
})

test('the stores load every tables.pg.ts as their mirror (dialectTables), so every table is swapped on PostgreSQL', async () => {
  expect(modules.length).toBeGreaterThan(0) // every domain's store is loaded
  const loaded = [...(await mirrorTables()).keys()].sort()
  // The cluster side (PostgreSQL only) reaches its outbox by SQL of its own, not through a store's tables.
  const declared = pg
    .filter(({ file }) => !file.startsWith('src/cluster/'))
    .flatMap(({ tables }) => [...tables.values()].map((t) => pgConfig(t as PgTable).name))
    .sort()
  expect(loaded).toEqual(declared)
})

describe('each table matches its mirror', () => {
  test.each(pairs.map((p) => [p.label, p] as const))('%s', (_label, pair) => {
    expect(pair.pg).toBeDefined()
    expect(shapeOf(pair.pg!)).toEqual(shapeOf(pair.sqlite))
  })
})

test('PostgreSQL column kinds: byte-ordered text, ms timestamps as bigint', () => {
  for (const { pg: table } of pairs) {
    for (const column of pgConfig(table as PgTable).columns) {
      const where = `${pgConfig(table as PgTable).name}.${column.name}`
      if (column.dataType === 'string' || column.dataType === 'custom')
        expect(`${where} ${column.getSQLType()}`).toMatch(/ (text COLLATE "C"|boolean|integer|bigint)$/)
      if (/(At|Deadline)$/.test(column.name)) expect(`${where} ${column.getSQLType()}`).toBe(`${where} bigint`)
    }
  }
})

test('the comparison notices a column, a default or an index on one side only', () => {
  const [pair] = pairs.filter((p) => p.label.endsWith('serverSecrets'))
  const expected = shapeOf(pair.pg!)
  const extraColumn = sqliteTable('server_secrets', { name: integer().primaryKey(), value: integer().notNull() })
  expect(shapeOf(extraColumn)).not.toEqual(expected)
  const withExtra = { ...shapeOf(pair.sqlite) }
  withExtra.columns = [...withExtra.columns, { ...withExtra.columns[1], name: 'rotated_at' }]
  expect(withExtra).not.toEqual(expected)
})

// --- The same rows in TypeScript (checked by tsc; nothing runs) ---
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
type Rows<M> = {
  [K in keyof M as M[K] extends { $inferSelect: unknown } ? K : never]: M[K] extends {
    $inferSelect: infer S
    $inferInsert: infer I
  }
    ? { select: S; insert: I }
    : never
}
type Mirrors<S, P> = Same<Rows<S>, Rows<P>>
const rowTypes: [
  Mirrors<typeof accounts, typeof accountsPg>,
  Mirrors<typeof auth, typeof authPg>,
  Mirrors<typeof db, typeof dbPg>,
  Mirrors<typeof delivery, typeof deliveryPg>,
  Mirrors<typeof experiments, typeof experimentsPg>,
  Mirrors<typeof guilds, typeof guildsPg>,
  Mirrors<typeof lobbies, typeof lobbiesPg>,
  Mirrors<typeof mfa, typeof mfaPg>,
  Mirrors<typeof oauth2, typeof oauth2Pg>,
  Mirrors<typeof remoteAuth, typeof remoteAuthPg>,
] = [true, true, true, true, true, true, true, true, true, true]
test('row types are checked by the type checker', () => expect(rowTypes.every(Boolean)).toBe(true))
