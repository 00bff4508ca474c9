// Every query of the delivery domain: the outbox. Async, as every store (docs/DESIGN.md, "Stores are async").
import { desc, eq } from 'drizzle-orm'
import { db, write } from '../db/client'
import { outbox, type OutboxRow } from './tables'

export async function insertOutbox(row: typeof outbox.$inferInsert): Promise<void> {
  return await write((w) => {
    w.insert(outbox).values(row).run()
  })
}

/** Newest first; only those sent to `to` when given. */
export async function outboxRows(to?: string): Promise<OutboxRow[]> {
  const query = db().select().from(outbox)
  return (to ? query.where(eq(outbox.to, to)) : query).orderBy(desc(outbox.createdAt), desc(outbox.id)).all()
}
