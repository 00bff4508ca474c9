// Every query of the cluster side: the Gateway's outbox (cluster/outbox.ts), on PostgreSQL (cluster mode runs there).
// Raw statements on the transaction's postgres-js connection: two of them go out together (pipelined) where a
// write's transaction waits for them.
import type { Sql } from 'postgres'
import { transaction, writeScope } from '../db/client'

export type OutboxRow = { id: number; eventId: string; entry: string; createdAt: number }

/** Whether this context is inside a transaction on PostgreSQL (the outbox's rows can be written in it). */
export const inPostgresTransaction = (): boolean => writeScope()?.server?.transaction === true

/** The postgres-js connection of the PostgreSQL transaction this context is in. */
function transactionClient(): Sql {
  const server = writeScope()?.server
  if (!server?.transaction) throw new Error('the outbox is read and written inside a PostgreSQL transaction')
  return server.client as Sql
}

/**
 * Inside a write's transaction, just before its COMMIT: take the transaction-long locks of `keys` (the entries'
 * topics, in one order for every transaction: no deadlock between two of them), then insert the rows in order. A
 * later transaction with a key in common waits for this one's COMMIT before it inserts, so its ids come after.
 */
export async function insertOutbox(keys: string[], rows: { eventId: string; entry: string }[], now: number) {
  const sql = transactionClient()
  const sorted = JSON.stringify([...new Set(keys)].sort())
  const values = JSON.stringify(rows.map((r) => [r.eventId, r.entry]))
  await Promise.all([
    sql`SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM json_array_elements_text(${sorted}::json) AS k`,
    sql`INSERT INTO gateway_outbox (event_id, entry, created_at)
        SELECT r->>0, r->>1, ${now} FROM json_array_elements(${values}::json) WITH ORDINALITY AS x(r, n) ORDER BY n`,
  ])
}

/**
 * One relay step in a transaction of its own: the oldest `limit` rows by id, locked and deleted in one statement (a
 * relay on another node that wants them waits until this one's COMMIT, then finds them gone), given to `relay` in id
 * order; if `relay` throws, the transaction rolls back and the rows wait again. Returns how many were relayed. Two
 * round trips: the rows, then COMMIT after `relay` (a SELECT then a DELETE took one more, which each write's answer
 * waited for); `run` runs the transaction (behind a write's COMMIT: on its connection, its statements sent with it).
 */
export async function relayOutbox(
  limit: number,
  relay: (rows: OutboxRow[]) => Promise<void>,
  run: <R>(fn: () => Promise<R>) => Promise<R> = transaction,
): Promise<number> {
  return await run(async () => {
    const sql = transactionClient()
    const [, rows] = await Promise.all([
      sql`SET LOCAL lock_timeout = '10s'`,
      sql<OutboxRow[]>`DELETE FROM gateway_outbox WHERE id IN (
          SELECT id FROM gateway_outbox ORDER BY id LIMIT ${limit} FOR UPDATE
        ) RETURNING id, event_id AS "eventId", entry, created_at AS "createdAt"`,
    ])
    if (rows.length === 0) return 0
    // RETURNING keeps no order.
    await relay([...rows].sort((a, b) => Number(a.id) - Number(b.id)))
    return rows.length
  })
}

/** When the oldest row waiting was written (ms), if any. */
export async function oldestOutboxRow(): Promise<number | undefined> {
  return await transaction(async () => {
    const [row] = await transactionClient()<{ at: number }[]>`SELECT min(created_at) AS at FROM gateway_outbox`
    return row?.at ?? undefined
  })
}
