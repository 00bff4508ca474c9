// The audit log: every console action and every operator command of the CLI is one row (who, what, on what, when,
// from where, why). Rows are only appended; the console lists and filters them, the CLI exports them as JSON lines.
import { cachedUser } from '../accounts/store'
import type { AuditRow } from './tables'
import { type AuditFilter, insertAudit, readAudit } from './store'

/** Who acted: an operator's session in the console, or the command line (no account). */
export type Actor = { kind: 'operator'; userId: string; address: string } | { kind: 'cli' }

export const CLI: Actor = { kind: 'cli' }

export type AuditEntry = {
  action: string
  targetType?: 'user' | 'application' | 'operator' | 'experiments' | 'lobby'
  targetId?: string
  reason?: string | null
  details?: Record<string, unknown>
}

/** Append a row for what `actor` did (inside the action's transaction when the caller has one open). */
export async function audit(actor: Actor, entry: AuditEntry): Promise<void> {
  const name = actor.kind === 'cli' ? 'cli' : ((await cachedUser(actor.userId))?.username ?? actor.userId)
  await insertAudit({
    actorId: actor.kind === 'cli' ? null : actor.userId,
    actorName: name,
    action: entry.action,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId ?? null,
    reason: entry.reason?.trim() || null,
    address: actor.kind === 'cli' ? null : actor.address,
    details: entry.details ?? null,
  })
}

/** A row as the API and the export show it. */
export function auditView(row: AuditRow) {
  return {
    id: String(row.id),
    created_at: new Date(row.createdAt).toISOString(),
    actor: { id: row.actorId, name: row.actorName },
    action: row.action,
    target_type: row.targetType,
    target_id: row.targetId,
    reason: row.reason,
    address: row.address,
    details: row.details ?? {},
  }
}

export async function listAudit(filter: AuditFilter) {
  return (await readAudit(filter)).map(auditView)
}

/** Every row (oldest first), one JSON object a line: `audit export`. */
export async function exportAudit(filter: Omit<AuditFilter, 'limit' | 'before'> = {}): Promise<string> {
  const rows: AuditRow[] = []
  let before: number | undefined
  for (;;) {
    const page = await readAudit({ ...filter, before, limit: 1000 })
    rows.push(...page)
    if (page.length < 1000) break
    before = page[page.length - 1]!.id
  }
  return rows
    .reverse()
    .map((r) => JSON.stringify(auditView(r)))
    .join('\n')
}
