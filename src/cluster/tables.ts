// The cluster's table. PostgreSQL only in use (cluster mode runs on PostgreSQL); declared here as well because the
// SQLite and PostgreSQL table sets mirror each other (tests/db/pg-schema.test.ts): on SQLite it stays empty.
import { index, int, long, table, text, timestamp } from '../db/table'

/**
 * The Gateway's outbox (cluster/outbox.ts): an entry for the log written in the transaction of the write it tells of,
 * relayed to Redis after COMMIT and deleted then. `id` is handed out once the transaction holds the locks of the
 * entry's keys, so for one key the ids follow the commit order, which the relay of the key's partition keeps.
 */
export const gatewayOutbox = table(
  'gateway_outbox',
  {
    id: long().primaryKey({ autoIncrement: true }),
    /** The log's dedupe key: relayed twice, appended once. */
    eventId: text().notNull(),
    /** The entry (cluster/log.ts Draft) as JSON. */
    entry: text().notNull(),
    createdAt: timestamp().notNull(),
    /**
     * The partition this row is relayed in (outbox.ts partitionOf its keys). An entry whose keys fall in several
     * partitions has a row in each (one event id: appended once, by the relay that holds them all).
     */
    part: int().notNull().default(0),
    /** Every partition of the entry, comma-separated ('' for rows written before partitions: partition 0 only). */
    parts: text().notNull().default(''),
  },
  (t) => [index('gateway_outbox_part').on(t.part, t.id)],
)
