// drizzle-pg/ on a real PostgreSQL server (tests/db/postgres.ts): two appliers at once on a fresh database, one
// applies while the other waits on the advisory lock and then finds nothing to do; the live catalog
// (information_schema, pg_constraint, pg_index) then holds exactly the PostgreSQL twins of src/**/tables.ts
// (db/pg/twins.ts): columns with their types, collation, nullability, defaults and identity, primary keys, unique
// constraints, foreign keys with their actions, indexes with their columns, expressions, uniqueness and WHERE. A
// database newer than the migrations is refused.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core'
import postgres, { type Sql } from 'postgres'
import { SchemaTooNewError } from '../../src/db/migrate'
import { applyPgMigrations, embeddedPgMigrations, MIGRATION_LOCK } from '../../src/db/pg/migrate'
import { cluster, type TestDatabase, templateSeconds, testDatabase } from './postgres'
import { pgModules, shapeOf } from './schema-shape'

let fresh: TestDatabase
const clients: Sql[] = []
const connect = (db: TestDatabase) => {
  const sql = postgres(db.options({ max: 1 }))
  clients.push(sql)
  return sql
}

beforeAll(async () => {
  const server = await cluster()
  fresh = await testDatabase({ empty: true })
  console.log(
    `postgres: initdb ${server.timings.initdb.toFixed(2)} s, start ${server.timings.start.toFixed(2)} s, template migrations ${(await templateSeconds()).toFixed(2)} s`,
  )
})
afterAll(async () => {
  await Promise.all([...clients, fresh?.sql].filter(Boolean).map((sql) => sql!.end({ timeout: 1 })))
})

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await check()); await Bun.sleep(5))
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
}

describe('applying the migrations', () => {
  test('two appliers at once: one applies, the other waits on the lock and finds nothing to do', async () => {
    const embedded = embeddedPgMigrations()
    // The first statement of the first migration sleeps, so the second applier surely arrives while the first works.
    const slow = embedded.map((m, i) => (i ? m : { ...m, sql: ['SELECT pg_sleep(0.3)', ...m.sql] }))
    const [a, b] = [connect(fresh), connect(fresh)]
    const locks = (granted: boolean) => fresh.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted = ${granted} AND s.datname = ${fresh.name}`
    const [{ lock }] = await fresh.sql<{ lock: number }[]>`SELECT hashtext(${MIGRATION_LOCK}) AS lock`
    expect(typeof lock).toBe('number')

    const began = performance.now()
    const first = applyPgMigrations(a, slow)
    await until(async () => (await locks(true))[0].n === 1, 'the first applier to hold the lock')
    const second = applyPgMigrations(b, slow)
    await until(async () => (await locks(false))[0].n === 1, 'the second applier to wait for it')
    const [applied, nothing] = await Promise.all([first, second])
    const seconds = (performance.now() - began) / 1000

    expect(applied).toEqual(embedded.map((m) => m.tag))
    expect(nothing).toEqual([])
    expect(seconds).toBeLessThan(10)
    const rows = await fresh.sql<{ hash: string; created_at: string }[]>`
      SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id`
    expect(rows.map((r) => [r.hash, Number(r.created_at)])).toEqual(embedded.map((m) => [m.hash, m.folderMillis]))
    expect(await applyPgMigrations(a)).toEqual([])
  })

  test('a database copied from the template is migrated already', async () => {
    const db = await testDatabase()
    clients.push(db.sql)
    expect(await applyPgMigrations(db.sql)).toEqual([])
    const [{ n }] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM users`
    expect(n).toBe(0)
  })

  test('a database migrated by a newer version is refused', async () => {
    const db = await testDatabase()
    clients.push(db.sql)
    const newest = embeddedPgMigrations().at(-1)!
    await db.sql`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('later', ${newest.folderMillis + 1})`
    await db.sql`UPDATE drizzle.__lobby_server SET value = '99.0.0' WHERE key = 'migrated_by'`
    const error = await applyPgMigrations(db.sql).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SchemaTooNewError)
    expect(String((error as Error).message)).toContain('lobby-server 99.0.0')
  })
})

describe('the live catalog matches the PostgreSQL twins of src/**/tables.ts', async () => {
  const tables = (await pgModules()).flatMap((m) => [...m.tables.values()]) as PgTable[]
  const expected = new Map(
    tables.map((t) => [getTableConfig(t).name, { shape: shapeOf(t), config: getTableConfig(t) }]),
  )

  test('the same tables', async () => {
    const rows = await fresh.sql<{ table_name: string }[]>`
      SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`
    expect(rows.map((r) => r.table_name).sort()).toEqual([...expected.keys()].sort())
  })

  test('columns: type, collation, nullability, default, identity, in order', async () => {
    const rows = await fresh.sql<
      {
        table_name: string
        column_name: string
        data_type: string
        collation_name: string | null
        is_nullable: string
        column_default: string | null
        is_identity: string
        identity_generation: string | null
      }[]
    >`SELECT table_name, column_name, data_type, collation_name, is_nullable, column_default, is_identity,
        identity_generation
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`
    const live = rows.map((r) => ({
      table: r.table_name,
      column: r.column_name,
      type: r.data_type,
      collation: r.collation_name,
      notNull: r.is_nullable === 'NO',
      // '0', 'false', 'en-US' (from 'en-US'::text), '{}'
      default: r.column_default?.replace(/::(text|bigint|integer)$/, '').replace(/^'(.*)'$/, '$1') ?? null,
      identity: r.is_identity === 'YES' ? r.identity_generation : null,
    }))
    const wanted = [...expected.values()]
      .sort((a, b) => (a.shape.name < b.shape.name ? -1 : 1))
      .flatMap(({ shape, config }) =>
        shape.columns.map((c, i) => {
          const sqlType = config.columns[i].getSQLType()
          return {
            table: shape.name,
            column: c.name,
            type: sqlType === 'text COLLATE "C"' ? 'text' : sqlType,
            collation: sqlType === 'text COLLATE "C"' ? 'C' : null,
            notNull: c.notNull,
            default: c.default === undefined ? null : String(c.default),
            identity: c.autoNumbered ? 'BY DEFAULT' : null,
          }
        }),
      )
    expect(live).toEqual(wanted)
  })

  test('primary keys, unique constraints and foreign keys', async () => {
    const rows = await fresh.sql<
      {
        table: string
        name: string
        type: string
        columns: string[]
        ftable: string | null
        fcolumns: string[]
        del: string
        upd: string
      }[]
    >`SELECT c.conrelid::regclass::text AS table, c.conname AS name, c.contype AS type,
        CASE WHEN c.confrelid = 0 THEN NULL ELSE c.confrelid::regclass::text END AS ftable,
        c.confdeltype AS del, c.confupdtype AS upd,
        ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) AS columns,
        ARRAY(SELECT a.attname::text FROM unnest(coalesce(c.confkey, '{}')) WITH ORDINALITY k(n, i)
          JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i) AS fcolumns
      FROM pg_constraint c JOIN pg_namespace ns ON ns.oid = c.connamespace
      WHERE ns.nspname = 'public' AND c.contype IN ('p', 'u', 'f')`
    const action: Record<string, string> = {
      a: 'no action',
      c: 'cascade',
      n: 'set null',
      r: 'restrict',
      d: 'set default',
    }
    const describe = (kind: string, table: string, columns: string[], rest = '') =>
      `${kind} ${table}(${columns.join(',')})${rest}`
    const live = rows
      .map((r) =>
        r.type === 'p'
          ? describe('primary', r.table, r.columns)
          : r.type === 'u'
            ? describe('unique', r.table, r.columns, ` ${r.name}`)
            : describe(
                'foreign',
                r.table,
                r.columns,
                ` -> ${r.ftable}(${r.fcolumns.join(',')}) ${action[r.del]}/${action[r.upd]}`,
              ),
      )
      .sort()
    const wanted = [...expected.values()]
      .flatMap(({ shape }) => [
        ...(shape.primaryKeys.length
          ? shape.primaryKeys.map((pk) => describe('primary', shape.name, pk.columns))
          : [
              describe(
                'primary',
                shape.name,
                shape.columns.filter((c) => c.primary).map((c) => c.name),
              ),
            ]),
        ...shape.columns.filter((c) => c.unique).map((c) => describe('unique', shape.name, [c.name], ` ${c.unique}`)),
        ...shape.uniqueConstraints.map((u) => describe('unique', shape.name, u.columns, ` ${u.name}`)),
        ...shape.foreignKeys.map((fk) =>
          describe(
            'foreign',
            shape.name,
            fk.columns,
            ` -> ${fk.table}(${fk.references.join(',')}) ${fk.onDelete}/${fk.onUpdate}`,
          ),
        ),
      ])
      .sort()
    expect(live).toEqual(wanted)
  })

  test('indexes: columns and expressions, uniqueness, WHERE', async () => {
    const rows = await fresh.sql<
      { table: string; name: string; unique: boolean; parts: string[]; where: string | null }[]
    >`
      SELECT t.relname AS table, c.relname AS name, i.indisunique AS unique,
        ARRAY(SELECT pg_get_indexdef(i.indexrelid, k, true) FROM generate_series(1, i.indnkeyatts) k) AS parts,
        pg_get_expr(i.indpred, i.indrelid, true) AS where
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
      JOIN pg_namespace ns ON ns.oid = t.relnamespace
      WHERE ns.nspname = 'public' AND NOT i.indisprimary
        AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype = 'u')`
    // The catalog's spelling of the mirror's SQL: (id)::bigint for CAST("id" AS bigint), no table prefix.
    const spell = (text: string) =>
      text
        .replace(/CAST\("(\w+)" AS (\w+)\)/g, '($1::$2)')
        .replace(/"\w+"\."(\w+)"/g, '$1')
        .replace(/"(\w+)"/g, '$1')
    const live = rows
      .map(
        (r) =>
          `${r.table} ${r.name}${r.unique ? ' unique' : ''} (${r.parts.join(', ').replaceAll('"', '')})${r.where ? ` WHERE ${r.where}` : ''}`,
      )
      .sort()
    const wanted = [...expected.values()]
      .flatMap(({ shape }) =>
        shape.indexes.map(
          (ix) =>
            `${shape.name} ${ix.name}${ix.unique ? ' unique' : ''} (${ix.on.map(spell).join(', ')})${ix.where ? ` WHERE ${spell(ix.where)}` : ''}`,
        ),
      )
      .sort()
    expect(live).toEqual(wanted)
  })
})
