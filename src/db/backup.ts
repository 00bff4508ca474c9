// The SQLite file's backup and restore (the CLI's `backup FILE`, `restore FILE`): a consistent, integrity-checked copy,
// and a restore under the server lock that keeps the database it replaces.
import { Database } from 'bun:sqlite'
import { chownSync, copyFileSync, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { VERSION } from '../version'
import { openSqlite } from './client'
import { DatabaseLockedError, lockDatabase, lockPathOf, unlockDatabase } from './lock'
import { embeddedMigrations } from './migrate'

/** PRAGMA integrity_check of a database file, opened read-only: 'ok' or the first problems. */
function integrityOf(path: string): string {
  const handle = new Database(path, { readonly: true })
  try {
    const rows = handle.query('PRAGMA integrity_check').values() as [string][]
    return rows
      .map((r) => r[0])
      .slice(0, 5)
      .join('; ')
  } finally {
    handle.close()
  }
}

/** The migrations a database file records (newest last); [] when it has none. */
function migrationsOf(path: string): number[] {
  const handle = new Database(path, { readonly: true })
  try {
    const table = handle
      .query("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'")
      .get()
    if (!table) return []
    return (
      handle.query('SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at').values() as [number][]
    ).map((r) => Number(r[0]))
  } finally {
    handle.close()
  }
}

function schemaTag(migrations: number[]): string | null {
  const last = migrations.at(-1)
  if (last === undefined) return null
  return (
    embeddedMigrations().find((m) => m.folderMillis === last)?.tag ??
    `newer than this binary (${new Date(last).toISOString()})`
  )
}

/**
 * VACUUM INTO a temporary name beside FILE (a consistent snapshot: one read transaction, writers carry on in WAL
 * mode), integrity-checked, then renamed to FILE: FILE exists only when the backup is whole and sound.
 */
export async function backup(databasePath: string, file: string) {
  if (databasePath === ':memory:') throw new Error('DATABASE_PATH is :memory:, there is nothing to back up')
  if (!existsSync(databasePath)) throw new Error(`no database at ${databasePath}`)
  if (existsSync(file)) throw new Error(`${file} exists; give a new file name`)
  mkdirSync(dirname(file), { recursive: true })
  const partial = `${file}.partial`
  rmSync(partial, { force: true })
  const source = openSqlite(databasePath, { create: false })
  const started = Date.now()
  try {
    source.query('VACUUM INTO ?').run(partial)
  } catch (error) {
    rmSync(partial, { force: true })
    throw new Error(`backup failed: ${(error as Error).message}`)
  } finally {
    source.close()
  }
  const integrity = integrityOf(partial)
  if (integrity !== 'ok') {
    rmSync(partial, { force: true })
    throw new Error(`backup failed its integrity check (${integrity}); nothing was written`)
  }
  renameSync(partial, file)
  return {
    file,
    bytes: statSync(file).size,
    integrity,
    schema: schemaTag(migrationsOf(file)),
    ms: Date.now() - started,
  }
}

/**
 * Replace the database with a backup, under the server lock (a running server refuses it; no server starts
 * meanwhile). The current database is checkpointed (its write-ahead log folded in) and kept aside as
 * `<path>.before-restore-<time>`; the stale -wal/-shm files are removed, so no old log is replayed onto the copy.
 */
export async function restore(databasePath: string, file: string) {
  if (databasePath === ':memory:') throw new Error('DATABASE_PATH is :memory:, there is nothing to restore into')
  if (!existsSync(file)) throw new Error(`${file}: no such file`)
  const integrity = integrityOf(file)
  if (integrity !== 'ok') throw new Error(`${file} fails its integrity check (${integrity}); the database is unchanged`)
  const migrations = migrationsOf(file)
  if (!migrations.length) throw new Error(`${file} is not a lobby-server database (no migrations recorded)`)
  const newest = embeddedMigrations().at(-1)!.folderMillis
  if (migrations.at(-1)! > newest)
    throw new Error(`${file} was written by a newer lobby-server than this ${VERSION}; restore it with that version`)
  mkdirSync(dirname(databasePath), { recursive: true })
  try {
    lockDatabase(databasePath)
  } catch (error) {
    if (error instanceof DatabaseLockedError)
      throw new Error(`${error.message.replace(/; stop it first$/, '')}: stop the server before restoring`)
    throw error
  }
  try {
    let previous: string | null = null
    if (existsSync(databasePath)) {
      const current = openSqlite(databasePath, { create: false })
      current.exec('PRAGMA wal_checkpoint(TRUNCATE)')
      current.close()
      previous = `${databasePath}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`
      renameSync(databasePath, previous)
    }
    for (const sidecar of ['-wal', '-shm', '-journal']) rmSync(`${databasePath}${sidecar}`, { force: true })
    const incoming = `${databasePath}.restoring`
    copyFileSync(file, incoming)
    // Run as root for a service with a user of its own (systemd's DynamicUser): the copy (and the lock file, which
    // this command may have created) get the folder's owner, or the service could not open them.
    if (process.getuid?.() === 0) {
      const { uid, gid } = statSync(dirname(databasePath))
      for (const path of [incoming, lockPathOf(databasePath)]) chownSync(path, uid, gid)
    }
    renameSync(incoming, databasePath)
    return { restored: databasePath, from: file, previous, schema: schemaTag(migrations) }
  } finally {
    unlockDatabase()
  }
}
