// The operator console's rows: who may enter it (granted by the CLI), and the audit log of every operator action.
import { users } from '../accounts/tables'
import { index, json, long, snowflake, table, text, timestamp } from '../db/table'

/** Accounts given the operator role (`operator grant`); nothing else opens the console. */
export const operators = table('operators', {
  userId: snowflake()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  grantedAt: timestamp().notNull(),
  /** The operator who granted it, or null for the CLI. */
  grantedBy: snowflake(),
})

/**
 * One row per operator action, from the console or the CLI: who (an operator's id, or null for the CLI, with the
 * name as it was), what, on what, when, from which address, why. Only ever inserted (no API updates or deletes it).
 */
export const adminAudit = table(
  'admin_audit',
  {
    id: long().primaryKey({ autoIncrement: true }),
    createdAt: timestamp().notNull(),
    actorId: snowflake(),
    actorName: text().notNull(),
    action: text().notNull(),
    targetType: text(),
    targetId: text(),
    reason: text(),
    address: text(),
    details: json<Record<string, unknown>>(),
  },
  (t) => [
    index('admin_audit_action_idx').on(t.action, t.id),
    index('admin_audit_target_idx').on(t.targetId, t.id),
    index('admin_audit_actor_idx').on(t.actorId, t.id),
  ],
)

export type OperatorRow = typeof operators.$inferSelect
export type AuditRow = typeof adminAudit.$inferSelect
