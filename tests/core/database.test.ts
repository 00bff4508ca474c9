import { expect, test } from 'bun:test'
import { rawDatabase } from '../../src/db/client'
import { embeddedMigrations } from '../../src/db/migrate'
import { onPostgres, server } from '../helpers'

test.skipIf(onPostgres)(
  'SQLite runs with WAL, foreign keys and a busy timeout (SQLite only, skipped on PostgreSQL: pragmas)',
  async () => {
    await server()
    const db = rawDatabase()
    expect(db.query('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(db.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
    expect((db.query('PRAGMA busy_timeout').get() as { timeout: number }).timeout).toBeGreaterThan(0)
  },
)

test.skipIf(onPostgres)(
  'every embedded migration is recorded as applied (SQLite only, skipped on PostgreSQL: tests/db/pg-migrations.test.ts checks drizzle-pg/)',
  async () => {
    await server()
    const applied = rawDatabase().query('SELECT hash FROM __drizzle_migrations').all() as { hash: string }[]
    expect(applied.map((r) => r.hash)).toEqual(embeddedMigrations().map((m) => m.hash))
  },
)
