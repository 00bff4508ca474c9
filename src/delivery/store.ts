// Every query of the delivery domain: the outbox. Async, as every store (docs/DESIGN.md, "Stores are async").
import { desc, eq } from 'drizzle-orm'
import { db, dialectTables, write } from '../db/client'
import * as sqliteTables from './tables'
import type { OutboxRow } from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables, () => import('./tables.pg'))

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
