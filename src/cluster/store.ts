// Every query of the cluster side: the Gateway's outbox (cluster/outbox.ts), on PostgreSQL (cluster mode runs there).
// Raw statements on the transaction's postgres-js connection: two of them go out together (pipelined) where a
// write's transaction waits for them.
import type { Sql } from 'postgres'
import { transaction, writeScope } from '../db/client'
import type { gatewayOutbox } from './tables'

type Columns = typeof gatewayOutbox.$inferSelect

export type OutboxRow = Pick<Columns, 'id' | 'eventId' | 'entry' | 'createdAt'>

/** Whether this context is inside a transaction on PostgreSQL (the outbox's rows can be written in it). */
export const inPostgresTransaction = (): boolean => writeScope()?.server?.transaction === true

/** The postgres-js connection of the PostgreSQL transaction this context is in. */
function transactionClient(): Sql {
  const server = writeScope()?.server
  if (!server?.transaction) throw new Error('the outbox is read and written inside a PostgreSQL transaction')
  return server.client as Sql
}

/** The relays' advisory locks, one per partition: the two-number form (its own key space, apart from the keys'). */
const RELAY_LOCKS = 0x6f757462 // 'outb'

/** A row to write: one per partition of the entry (`parts`, sorted; the first is where an entry with one goes). */
export type OutboxInsert = Pick<Columns, 'eventId' | 'entry'> & { parts: number[] }

/**
 * Inside a write's transaction, just before its COMMIT: take the transaction-long locks of `keys` (the entries' keys,
 * in one order for every transaction: no deadlock between two of them), then insert the rows in order, one per
 * partition of each entry. A later transaction with a key in common waits for this one's COMMIT before it inserts, so
 * its ids come after.
 */
export async function insertOutbox(keys: string[], rows: OutboxInsert[], now: number) {
  const sql = transactionClient()
  const sorted = JSON.stringify([...new Set(keys)].sort())
  const values = JSON.stringify(rows.flatMap((r) => r.parts.map((p) => [r.eventId, r.entry, p, r.parts.join(',')])))
  await Promise.all([
    sql`SELECT pg_advisory_xact_lock(hashtextextended(k, 0)) FROM json_array_elements_text(${sorted}::json) AS k`,
    sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
        SELECT r->>0, r->>1, ${now}, (r->>2)::int, r->>3
        FROM json_array_elements(${values}::json) WITH ORDINALITY AS x(r, n) ORDER BY n`,
  ])
}

/** An entry taken by a relay: its rows' first id (the order it is appended in), its partitions. */
export type OutboxEvent = OutboxRow & { parts: number[] }

/**
 * The rows of `parts` hold an entry of other partitions as well: its relay must hold those too (a relay of these
 * alone would append it before an older row of theirs). The step rolls back; `parts` is the wider set to take.
 */
export class WiderRelay extends Error {
  constructor(readonly parts: number[]) {
    super('an outbox entry spans partitions this relay does not hold')
  }
}

type RawRow = OutboxRow & Pick<Columns, 'part' | 'parts'>

/**
 * One relay step of the partitions `parts` in a transaction of its own: their locks (a relay of any of them elsewhere
 * waits, and relays of other partitions go on beside it), then their oldest rows (up to `limit`, and every row of an
 * entry taken) deleted and given to `relay` as entries in id order; if `relay` throws, the transaction rolls back and
 * the rows wait again. Throws WiderRelay (rolled back) when a row's entry spans partitions beyond `parts`. Returns how
 * many rows it took. Two round trips: the locks and the rows, then COMMIT after `relay`; `run` runs the transaction
 * (behind a write's COMMIT: on its connection, its statements sent with it).
 */
export async function relayOutbox(
  parts: number[],
  limit: number,
  relay: (events: OutboxEvent[]) => Promise<void>,
  run: <R>(fn: () => Promise<R>) => Promise<R> = transaction,
): Promise<number> {
  const held = [...new Set(parts)].sort((a, b) => a - b)
  return await run(async () => {
    const sql = transactionClient()
    // An array literal, `part = ANY(…)`: the planner reads it through the (part, id) index (a subquery over a JSON
    // list made it walk the whole table by id).
    const list = `{${held.join(',')}}`
    const [, , rows] = await Promise.all([
      sql`SET LOCAL lock_timeout = '10s'`,
      sql`SELECT pg_advisory_xact_lock(${RELAY_LOCKS}, p) FROM unnest(${list}::int[]) WITH ORDINALITY AS x(p, n) ORDER BY n`,
      sql<RawRow[]>`DELETE FROM gateway_outbox o WHERE o.id IN (
          SELECT id FROM gateway_outbox WHERE part = ANY(${list}::int[]) ORDER BY id LIMIT ${limit}
        ) RETURNING id, event_id AS "eventId", entry, created_at AS "createdAt", part, parts`,
    ])
    if (rows.length === 0) return 0
    let events = entriesOf(rows, held)
    if (events === 'cut') {
      // The limit left some of an entry's rows behind (ids past the last one taken): take them too. No row left
      // behind needs to go before the entry: one older for a key it shares has a smaller id than any of its rows.
      const cut = JSON.stringify([...new Set(rows.map((r) => r.eventId))])
      rows.push(
        ...(await sql<RawRow[]>`DELETE FROM gateway_outbox
          WHERE part = ANY(${list}::int[])
            AND event_id IN (SELECT e FROM json_array_elements_text(${cut}::json) AS e)
          RETURNING id, event_id AS "eventId", entry, created_at AS "createdAt", part, parts`),
      )
      events = entriesOf(rows, held)
      if (events === 'cut') throw new Error('an outbox entry lacks some of its rows')
    }
    await relay(events)
    return rows.length
  })
}

/** The rows as entries in id order; WiderRelay when one spans more than `held`, 'cut' when one lacks rows. */
function entriesOf(rows: RawRow[], held: number[]): OutboxEvent[] | 'cut' {
  const byEvent = new Map<string, OutboxEvent & { rows: number }>()
  let wider: Set<number> | undefined
  for (const r of rows) {
    const id = Number(r.id)
    const known = byEvent.get(r.eventId)
    if (known) {
      known.rows += 1
      known.id = Math.min(known.id, id)
      continue
    }
    const parts = r.parts === '' ? [r.part] : r.parts.split(',').map(Number)
    for (const p of parts) if (!held.includes(p)) (wider ??= new Set(held)).add(p)
    byEvent.set(r.eventId, { id, eventId: r.eventId, entry: r.entry, createdAt: r.createdAt, parts, rows: 1 })
  }
  if (wider) throw new WiderRelay([...wider])
  const events = [...byEvent.values()]
  if (events.some((e) => e.rows < e.parts.length)) return 'cut'
  return events.sort((a, b) => a.id - b.id)
}

/** The partitions that hold rows now. */
export async function outboxPartitions(): Promise<number[]> {
  return await transaction(async () => {
    const rows = await transactionClient()<{ part: number }[]>`SELECT DISTINCT part FROM gateway_outbox`
    return rows.map((r) => r.part)
  })
}

/** When the oldest row waiting was written (ms), if any. */
export async function oldestOutboxRow(): Promise<number | undefined> {
  return await transaction(async () => {
    const [row] = await transactionClient()<{ at: number }[]>`SELECT min(created_at) AS at FROM gateway_outbox`
    return row?.at ?? undefined
  })
}
