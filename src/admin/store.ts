// Every query of the console's own tables: the operator role and the audit log (appended, read, exported).
import { and, desc, eq, lt, sql } from 'drizzle-orm'
import { clock } from '../core/clock'
import { db, write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { AuditRow, OperatorRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export async function findOperator(userId: string): Promise<OperatorRow | undefined> {
  return await db().select().from(t.operators).where(eq(t.operators.userId, userId)).get()
}

/** Grant the role; false when the user already had it. */
export async function insertOperator(userId: string, grantedBy: string | null): Promise<boolean> {
  return await write(async (w) => {
    const rows = await w
      .insert(t.operators)
      .values({ userId, grantedAt: clock.now(), grantedBy })
      .onConflictDoNothing()
      .returning({ userId: t.operators.userId })
      .all()
    return rows.length > 0
  })
}

/** Take the role away; false when the user did not have it. */
export async function deleteOperator(userId: string): Promise<boolean> {
  return await write(async (w) => {
    const rows = await w
      .delete(t.operators)
      .where(eq(t.operators.userId, userId))
      .returning({ userId: t.operators.userId })
      .all()
    return rows.length > 0
  })
}

export async function listOperators(): Promise<OperatorRow[]> {
  return await db().select().from(t.operators).orderBy(t.operators.grantedAt).all()
}

export type AuditInsert = Omit<typeof t.adminAudit.$inferInsert, 'id' | 'createdAt'>

/** Append one row (the log is only ever appended to). */
export async function insertAudit(row: AuditInsert): Promise<AuditRow> {
  return await write(
    async (w) =>
      await w
        .insert(t.adminAudit)
        .values({ ...row, createdAt: clock.now() })
        .returning()
        .get(),
  )
}

export type AuditFilter = { action?: string; targetId?: string; actorId?: string; before?: number; limit: number }

/** Newest first, `limit` rows older than `before` (an audit row id), filtered by what is given. */
export async function readAudit(filter: AuditFilter): Promise<AuditRow[]> {
  const where = [
    filter.action ? eq(t.adminAudit.action, filter.action) : undefined,
    filter.targetId ? eq(t.adminAudit.targetId, filter.targetId) : undefined,
    filter.actorId ? eq(t.adminAudit.actorId, filter.actorId) : undefined,
    filter.before !== undefined ? lt(t.adminAudit.id, filter.before) : undefined,
  ].filter((w) => w !== undefined)
  return await db()
    .select()
    .from(t.adminAudit)
    .where(where.length ? and(...where) : sql`1 = 1`)
    .orderBy(desc(t.adminAudit.id))
    .limit(filter.limit)
    .all()
}
