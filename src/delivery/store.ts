// Every query of the delivery domain: the outbox. Async, as every store (docs/DESIGN.md, "Stores are async").
import { and, desc, eq, lt } from 'drizzle-orm'
import { db, write } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { OutboxRow } from './tables'

// This store's tables: SQLite's, or their PostgreSQL twins once the server runs on it (db/dialect-tables.ts).
const t = dialectTables(sqliteTables)

export async function insertOutbox(row: typeof t.outbox.$inferInsert): Promise<void> {
  return await write(async (w) => {
    await w.insert(t.outbox).values(row).run()
  })
}

/** Newest first; only those sent to `to` when given. */
export async function outboxRows(to?: string): Promise<OutboxRow[]> {
  const query = db().select().from(t.outbox)
  return (to ? query.where(eq(t.outbox.to, to)) : query).orderBy(desc(t.outbox.createdAt), desc(t.outbox.id)).all()
}

/** The message's delivery answer: its status, and its body (dropped once delivered). */
export async function settleOutbox(id: string, status: string, body: string): Promise<void> {
  return await write(async (w) => {
    await w.update(t.outbox).set({ status, body }).where(eq(t.outbox.id, id)).run()
  })
}

/** The 'pending' messages written before `before`, each claimed ('sending') by one caller only. */
export async function claimPendingOutbox(before: number): Promise<OutboxRow[]> {
  return await write(async (w) => {
    return await w
      .update(t.outbox)
      .set({ status: 'sending' })
      .where(and(eq(t.outbox.status, 'pending'), lt(t.outbox.createdAt, before)))
      .returning()
      .all()
  })
}
