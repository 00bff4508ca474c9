// Applies drizzle-kit's migrations from an embedded list, so the compiled binary needs no drizzle/ folder.
//
// Same bookkeeping as drizzle's own migrator (`__drizzle_migrations`: hash, created_at = the journal's `when`), so
// both can run against one file, but in one IMMEDIATE transaction that reads what is applied after taking the write
// lock: a CLI command and a server starting together cannot both apply a migration. A database that holds a
// migration newer than every one this binary carries was migrated by a newer version: it is refused (running on it
// would skip what the newer schema enforces), naming the version that migrated it.
import type { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { VERSION } from '../version'
import { journal, sqlByTag } from './migrations.generated'

export type MigrationMeta = { tag: string; sql: string[]; bps: boolean; folderMillis: number; hash: string }

export class SchemaTooNewError extends Error {}

type Journal = { entries: { tag: string; when: number; breakpoints: boolean }[] }

/** The migrations of a generated module (drizzle/ for SQLite, drizzle-pg/ for PostgreSQL), in journal order. */
export function migrationsOf(journal: Journal, sqlByTag: Record<string, string>): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = sqlByTag[entry.tag]
    if (text === undefined) throw new Error(`migration ${entry.tag} is not embedded; run bun run db:generate`)
    return {
      tag: entry.tag,
      sql: text.split('--> statement-breakpoint'),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      // Same hash drizzle's own migrator computes, so both can run against one database.
      hash: createHash('sha256').update(text).digest('hex'),
    }
  })
}

export function embeddedMigrations(): MigrationMeta[] {
  return migrationsOf(journal, sqlByTag)
}

/** The refusal of a database a newer version migrated, from what that version recorded (`migrated_by`, `schema`). */
export function schemaTooNew(meta: Record<string, string>, newestTag: string): SchemaTooNewError {
  const by = meta.migrated_by ? `lobby-server ${meta.migrated_by}` : 'a newer lobby-server'
  const schema = meta.schema ? ` (schema ${meta.schema})` : ''
  return new SchemaTooNewError(
    `the database was migrated by ${by}${schema}; this binary is ${VERSION} and knows schema ${newestTag} at most: run ${meta.migrated_by ?? 'that version'} or newer (downgrades are refused; restore a backup taken before the upgrade to go back)`,
  )
}

const META_TABLE = '__lobby_server'

type Applied = { hash: string; created_at: number }

/**
 * Apply the pending migrations; returns the tags applied (in order). Throws SchemaTooNewError when the database
 * holds a migration newer than the newest embedded one.
 */
export function applyMigrations(sqlite: Database, migrations = embeddedMigrations()): string[] {
  const newest = migrations.at(-1)
  sqlite.exec(
    'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
  )
  sqlite.exec(`CREATE TABLE IF NOT EXISTS "${META_TABLE}" (key TEXT PRIMARY KEY, value TEXT NOT NULL)`)
  // drizzle-kit changes a column of SQLite by rebuilding its table (CREATE __new_x, copy, DROP x, RENAME): its
  // `PRAGMA foreign_keys=OFF` is a no-op inside our transaction, and with keys on, DROP TABLE deletes the table's rows
  // first, which cascades to every child row (a channel's messages). So keys are off for the whole run, as SQLite's
  // own procedure for schema changes says, and checked before the COMMIT instead.
  sqlite.exec('PRAGMA foreign_keys = OFF')
  sqlite.exec('BEGIN IMMEDIATE')
  try {
    const applied = sqlite
      .query('SELECT hash, created_at FROM "__drizzle_migrations" ORDER BY created_at')
      .all() as Applied[]
    const last = applied.at(-1)
    if (last && newest && Number(last.created_at) > newest.folderMillis) {
      const meta = Object.fromEntries(
        (sqlite.query(`SELECT key, value FROM "${META_TABLE}"`).all() as { key: string; value: string }[]).map((r) => [
          r.key,
          r.value,
        ]),
      )
      throw schemaTooNew(meta, newest.tag)
    }
    const done: string[] = []
    for (const migration of migrations) {
      if (last && Number(last.created_at) >= migration.folderMillis) continue
      for (const statement of migration.sql) if (statement.trim()) sqlite.exec(statement)
      sqlite
        .query('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)')
        .run(migration.hash, migration.folderMillis)
      done.push(migration.tag)
    }
    if (done.length) {
      const broken = sqlite.query('PRAGMA foreign_key_check').all()
      if (broken.length)
        throw new Error(`the migrations left rows with no parent: ${JSON.stringify(broken.slice(0, 5))}`)
      const upsert = sqlite.query(
        `INSERT INTO "${META_TABLE}" (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      )
      upsert.run('migrated_by', VERSION)
      upsert.run('schema', done.at(-1)!)
    }
    sqlite.exec('COMMIT')
    return done
  } catch (error) {
    sqlite.exec('ROLLBACK')
    throw error
  } finally {
    sqlite.exec('PRAGMA foreign_keys = ON')
  }
}
