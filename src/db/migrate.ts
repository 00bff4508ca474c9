// Applies drizzle-kit's migrations from an embedded list, so the compiled binary needs no drizzle/ folder.
import { createHash } from 'node:crypto'
import type { BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite'
import { journal, sqlByTag } from './migrations.generated'

type MigrationMeta = { sql: string[]; bps: boolean; folderMillis: number; hash: string }

export function embeddedMigrations(): MigrationMeta[] {
  return journal.entries.map((entry) => {
    const text = sqlByTag[entry.tag]
    if (text === undefined) throw new Error(`migration ${entry.tag} is not embedded; run bun run db:generate`)
    return {
      sql: text.split('--> statement-breakpoint'),
      bps: entry.breakpoints,
      folderMillis: entry.when,
      // Same hash drizzle's own migrator computes, so both can run against one file.
      hash: createHash('sha256').update(text).digest('hex'),
    }
  })
}

export function applyMigrations(db: BunSQLiteDatabase): void {
  // dialect and session are internal to drizzle; this is the call its migrate() makes after reading the folder.
  const internal = db as unknown as { dialect: { migrate: (m: MigrationMeta[], s: unknown, c: object) => void }; session: unknown }
  internal.dialect.migrate(embeddedMigrations(), internal.session, { migrationsFolder: '' })
}
