// The operator role: granted and taken away by the CLI (`operator grant|revoke --user <id, e-mail or username>`),
// each an audit row. There is no default operator and no password of the console's own.
import { cachedUser, findUserByEmail, findUserByUsername } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { transaction } from '../db/client'
import { type Actor, audit } from './audit'
import { deleteOperator, insertOperator, listOperators } from './store'

/** The user an operator command names: an id, an e-mail or a username. */
export async function findUserNamed(who: string): Promise<UserRow | undefined> {
  const value = who.trim()
  if (/^\d{1,20}$/.test(value)) {
    const byId = await cachedUser(value)
    if (byId) return byId
  }
  if (value.includes('@')) return await findUserByEmail(value)
  return await findUserByUsername(value)
}

export class NoSuchUser extends Error {}

async function named(who: string): Promise<UserRow> {
  const user = await findUserNamed(who)
  if (!user || user.bot) throw new NoSuchUser(`no user named ${who}`)
  return user
}

export async function grantOperator(actor: Actor, who: string) {
  const user = await named(who)
  const granted = await transaction(async () => {
    const added = await insertOperator(user.id, actor.kind === 'cli' ? null : actor.userId)
    if (added) await audit(actor, { action: 'operator.grant', targetType: 'user', targetId: user.id })
    return added
  })
  return { id: user.id, username: user.username, operator: true, changed: granted }
}

export async function revokeOperator(actor: Actor, who: string) {
  const user = await named(who)
  const revoked = await transaction(async () => {
    const removed = await deleteOperator(user.id)
    if (removed) await audit(actor, { action: 'operator.revoke', targetType: 'user', targetId: user.id })
    return removed
  })
  return { id: user.id, username: user.username, operator: false, changed: revoked }
}

export async function operatorList() {
  const out = []
  for (const row of await listOperators()) {
    const user = await cachedUser(row.userId)
    out.push({ id: row.userId, username: user?.username ?? null, granted_at: new Date(row.grantedAt).toISOString() })
  }
  return out
}
