// A provisional account merged into a full account (provisional/merge.ts, in the OAuth2 code's transaction): the full
// account takes its friends, requests and blocks, as Discord's merge keeps a player's friends. What the full account
// already has with a user stays, and the provisional account's row with that user goes; what the two had with each other
// goes. The other users' sessions see the provisional account's relationship removed and the full account's added.
import { findUsers, lockUser } from '../accounts/store'
import type { DB } from '../db/client'
import { added, removed } from './relationships'
import { deleteRelationship, putRelationship, relationshipBetween, relationshipsOf } from './store'

export async function mergeRelationships(tx: DB, sourceId: string, targetId: string): Promise<void> {
  const rows = await relationshipsOf(sourceId)
  if (rows.length === 0) return
  for (const id of [sourceId, targetId, ...rows.map((r) => r.otherId)]
    .filter((v, i, all) => all.indexOf(v) === i)
    .sort())
    await lockUser(tx, id)
  const users = await findUsers([targetId, ...rows.map((r) => r.otherId)])
  const target = users.get(targetId)
  for (const mine of rows) {
    const other = users.get(mine.otherId)
    const theirs = await relationshipBetween(mine.otherId, sourceId)
    await deleteRelationship(tx, sourceId, mine.otherId)
    if (theirs) {
      await deleteRelationship(tx, mine.otherId, sourceId)
      removed(theirs)
    }
    if (mine.otherId === targetId || !other || !target) continue
    if (await relationshipBetween(targetId, mine.otherId)) continue
    const moved = { ...mine, userId: targetId }
    await putRelationship(tx, moved)
    added(moved, other)
    if (theirs) {
      const back = { ...theirs, otherId: targetId }
      await putRelationship(tx, back)
      added(back, target)
    }
  }
}
