// Applies drizzle-kit's PostgreSQL migrations (drizzle-pg/, embedded by scripts/gen-migrations.ts) through
// postgres-js, as src/db/migrate.ts does for SQLite: the same bookkeeping as drizzle's own PostgreSQL migrator
// (`drizzle.__drizzle_migrations`: hash, created_at = the journal's `when`), so drizzle-kit sees the same state, but
// in one transaction that first takes an advisory lock: several servers starting together on one database wait for
// each other, and each one after the first finds nothing left to do. A database migrated by a newer version (a
// migration newer than every one embedded) is refused, naming that version (`drizzle.__lobby_server`).
import type { Sql } from 'postgres'
import { VERSION } from '../../version'
import { type MigrationMeta, migrationsOf, schemaTooNew } from '../migrate'
import { journal, sqlByTag } from './migrations.generated'

/** The advisory lock every applier takes first (pg_advisory_xact_lock(hashtext(...)), released at COMMIT). */
export const MIGRATION_LOCK = 'lobby-server:migrations'

export function embeddedPgMigrations(): MigrationMeta[] {
  return migrationsOf(journal, sqlByTag)
}

/**
 * Apply the pending migrations under the advisory lock; returns the tags applied (in order), none when another
 * applier got there first. Throws SchemaTooNewError when the database holds a migration newer than the newest given.
 */
export async function applyPgMigrations(sql: Sql, migrations = embeddedPgMigrations()): Promise<string[]> {
  const newest = migrations.at(-1)
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${MIGRATION_LOCK}))`
    await tx`CREATE SCHEMA IF NOT EXISTS drizzle`
    await tx`CREATE TABLE IF NOT EXISTS drizzle.__drizzle_migrations (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`
    await tx`CREATE TABLE IF NOT EXISTS drizzle.__lobby_server (key text PRIMARY KEY, value text NOT NULL)`
    const [last] = await tx<{ created_at: string }[]>`
      SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at DESC LIMIT 1`
    const lastMillis = last ? Number(last.created_at) : undefined
    if (lastMillis !== undefined && newest && lastMillis > newest.folderMillis) {
      const rows = await tx<{ key: string; value: string }[]>`SELECT key, value FROM drizzle.__lobby_server`
      const meta = Object.fromEntries(rows.map((r) => [r.key, r.value]))
      throw schemaTooNew(meta, newest.tag)
    }
    const done: string[] = []
    for (const migration of migrations) {
      if (lastMillis !== undefined && lastMillis >= migration.folderMillis) continue
      for (const statement of migration.sql) if (statement.trim()) await tx.unsafe(statement)
      await tx`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES (${migration.hash}, ${migration.folderMillis})`
      done.push(migration.tag)
    }
    if (done.length) {
      for (const [key, value] of [
        ['migrated_by', VERSION],
        ['schema', done.at(-1)!],
      ])
        await tx`INSERT INTO drizzle.__lobby_server (key, value) VALUES (${key}, ${value})
          ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    }
    return done
  })
}
