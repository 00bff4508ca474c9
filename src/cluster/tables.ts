// The cluster's table. PostgreSQL only in use (cluster mode runs on PostgreSQL); declared here as well because the
// SQLite and PostgreSQL table sets mirror each other (tests/db/pg-schema.test.ts): on SQLite it stays empty.
import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core'

/**
 * The Gateway's outbox (cluster/outbox.ts): an entry for the log written in the transaction of the write it tells of,
 * relayed to Redis after COMMIT and deleted then. `id` is handed out once the transaction holds the locks of the
 * entry's topics, so for one topic the ids follow the commit order, which the relay keeps.
 */
export const gatewayOutbox = sqliteTable('gateway_outbox', {
  id: integer().primaryKey({ autoIncrement: true }),
  /** The log's dedupe key: relayed twice, appended once. */
  eventId: text().notNull(),
  /** The entry (cluster/log.ts Draft) as JSON. */
  entry: text().notNull(),
  createdAt: integer().notNull(),
})
