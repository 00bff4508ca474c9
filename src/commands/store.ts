// Every query of application commands, async as every store (docs/DESIGN.md, "Stores are async"): readers take the
// open transaction as an optional last `tx`, writers (always inside a transaction) take it first.
import { and, asc, eq, inArray, isNull } from 'drizzle-orm'
import { asInteger, type DB, db } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { CommandRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

/** Whose commands: an application's global ones (guildId null) or those of one guild. */
export type Scope = { applicationId: string; guildId: string | null }

const inScope = (scope: Scope) =>
  and(
    eq(t.commands.applicationId, scope.applicationId),
    scope.guildId === null ? isNull(t.commands.guildId) : eq(t.commands.guildId, scope.guildId),
  )

/** The scope's commands, oldest first. */
export async function scopeCommands(scope: Scope, tx: DB = db()): Promise<CommandRow[]> {
  return tx
    .select()
    .from(t.commands)
    .where(inScope(scope))
    .orderBy(asc(asInteger(t.commands.id)))
    .all()
}

export async function scopeCommand(scope: Scope, id: string, tx: DB = db()): Promise<CommandRow | undefined> {
  return tx
    .select()
    .from(t.commands)
    .where(and(inScope(scope), eq(t.commands.id, id)))
    .get()
}

export async function insertCommand(tx: DB, row: typeof t.commands.$inferInsert): Promise<CommandRow> {
  return tx.insert(t.commands).values(row).returning().get()
}

export async function updateCommand(tx: DB, id: string, patch: Partial<Omit<CommandRow, 'id'>>): Promise<CommandRow> {
  return tx.update(t.commands).set(patch).where(eq(t.commands.id, id)).returning().get()
}

export async function deleteCommandRows(tx: DB, ids: string[]): Promise<number> {
  if (!ids.length) return 0
  return (await tx.delete(t.commands).where(inArray(t.commands.id, ids)).returning({ id: t.commands.id }).all()).length
}
