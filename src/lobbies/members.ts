// Member endpoints: upsert one, remove one, leave, bulk.
import { transaction } from '../db/client'
import { Effects } from './effects'
import { changeMembers, memberEffects, type MemberInput } from './member-changes'
import { restMember } from './serialize'
import type { LobbyRow } from './tables'

/** PUT /lobbies/{id}/members/{user}: add, or update an existing member (member add / member update). */
export async function putMember(lobby: LobbyRow, input: MemberInput) {
  const member = await transaction(async (tx) => {
    const effects = new Effects()
    const changes = await changeMembers(tx, lobby, [input], [], { field: 'id', reportUnchanged: true })
    memberEffects(lobby, changes, effects)
    await effects.flush()
    return changes.added[0] ?? changes.updated[0]
  })
  return restMember(member)
}

/** DELETE /lobbies/{id}/members/{user} and .../@me: safe when the user is not a member. */
export async function removeMember(lobby: LobbyRow, userId: string): Promise<void> {
  await transaction(async (tx) => {
    const effects = new Effects()
    memberEffects(lobby, await changeMembers(tx, lobby, [], [userId]), effects)
    await effects.flush()
  })
}

export type BulkItem = MemberInput & { remove_member?: boolean | null }

/** POST /lobbies/{id}/members/bulk: upserts and removals in one go; returns the upserted members. */
export async function bulkMembers(lobby: LobbyRow, items: BulkItem[]) {
  // The last item about a user decides.
  const last = new Map<string, BulkItem>()
  for (const item of items) last.set(item.id, item)
  const upserts = [...last.values()].filter((i) => !i.remove_member)
  const removes = [...last.values()].filter((i) => i.remove_member).map((i) => i.id)
  const changes = await transaction(async (tx) => {
    const effects = new Effects()
    const result = await changeMembers(tx, lobby, upserts, removes, { dropOverUserLimit: true, reportUnchanged: true })
    memberEffects(lobby, result, effects)
    await effects.flush()
    return result
  })
  const byId = new Map([...changes.added, ...changes.updated].map((m) => [m.userId, m]))
  return upserts.flatMap((u) => (byId.has(u.id) ? [restMember(byId.get(u.id)!)] : []))
}
