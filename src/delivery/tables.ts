import { index, table, text, textEnum, timestamp } from '../db/table'

/** Every e-mail and SMS the server sent (or would have sent, when no transport is configured). */
export const outbox = table(
  'outbox',
  {
    id: text().primaryKey(),
    channel: textEnum(['email', 'sms']).notNull(),
    to: text().notNull(),
    subject: text(),
    body: text().notNull(),
    /**
     * 'stored' (no transport configured), 'sent', 'failed', or 'pending' / 'sending' (written in a transaction, not
     * yet handed to its transport)
     */
    status: text().notNull(),
    createdAt: timestamp().notNull(),
  },
  (t) => [index('outbox_to_idx').on(t.to)],
)

export type OutboxRow = typeof outbox.$inferSelect
