// Every query of application commands, async as every store (docs/DESIGN.md, "Stores are async"): readers take the
// open transaction as an optional last `tx`, writers (always inside a transaction) take it first.
import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import { db, type DB } from '../db/client'
import { commands, type CommandRow } from './tables'

/** Whose commands: an application's global ones (guildId null) or those of one guild. */
export type Scope = { applicationId: string; guildId: string | null }

const inScope = (scope: Scope) =>
  and(
    eq(commands.applicationId, scope.applicationId),
    scope.guildId === null ? isNull(commands.guildId) : eq(commands.guildId, scope.guildId),
  )

/** The scope's commands, oldest first. */
export async function scopeCommands(scope: Scope, tx: DB = db()): Promise<CommandRow[]> {
  return tx
    .select()
    .from(commands)
    .where(inScope(scope))
    .orderBy(asc(sql`CAST(${commands.id} AS INTEGER)`))
    .all()
}

export async function scopeCommand(scope: Scope, id: string, tx: DB = db()): Promise<CommandRow | undefined> {
  return tx
    .select()
    .from(commands)
    .where(and(inScope(scope), eq(commands.id, id)))
    .get()
}

export async function insertCommand(tx: DB, row: typeof commands.$inferInsert): Promise<CommandRow> {
  return tx.insert(commands).values(row).returning().get()
}

export async function updateCommand(tx: DB, id: string, patch: Partial<Omit<CommandRow, 'id'>>): Promise<CommandRow> {
  return tx.update(commands).set(patch).where(eq(commands.id, id)).returning().get()
}

export async function deleteCommandRows(tx: DB, ids: string[]): Promise<number> {
  if (!ids.length) return 0
  return tx.delete(commands).where(inArray(commands.id, ids)).returning({ id: commands.id }).all().length
}
