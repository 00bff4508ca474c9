// A provisional account merged into a full account (provisional/merge.ts, in the OAuth2 code's transaction): the full
// account takes its friends, requests and blocks, as Discord's merge keeps a player's friends. What the full account
// already has with a user stays, and the provisional account's row with that user goes; what the two had with each other
// goes. The other users' sessions see the provisional account's relationship removed and the full account's added.
// Its game friends and requests move the same way, game by game; its game invites end.
import { findUsers, lockUser } from '../accounts/store'
import type { DB } from '../db/client'
import type { UserRow } from '../accounts/tables'
import { gameAdded, gameRemoved } from './game'
import { deleteGameRelationship, gameRelationshipBetween, gameRelationshipsOf, putGameRelationship } from './game-store'
import { endGameInvitesOf } from './invites'
import { added, removed } from './relationships'
import { blockedEitherWay, deleteRelationship, putRelationship, relationshipBetween, relationshipsOf } from './store'
import type { GameRelationshipRow } from './tables'

export async function mergeRelationships(tx: DB, sourceId: string, targetId: string): Promise<void> {
  const rows = await relationshipsOf(sourceId)
  const gameRows = await gameRelationshipsOf(sourceId)
  await endGameInvitesOf(tx, sourceId)
  if (rows.length === 0 && gameRows.length === 0) return
  const others = [...rows, ...gameRows].map((r) => r.otherId)
  for (const id of [sourceId, targetId, ...others].filter((v, i, all) => all.indexOf(v) === i).sort())
    await lockUser(tx, id)
  const users = await findUsers([targetId, ...others])
  await mergeGameRows(tx, gameRows, targetId, users)
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

/**
 * The provisional account's game friends and requests go to the full account the same way (each game apart): not the
 * two accounts' own, not where the full account already has one with that user in that game, nor across a block.
 */
async function mergeGameRows(
  tx: DB,
  gameRows: GameRelationshipRow[],
  targetId: string,
  users: Map<string, UserRow>,
): Promise<void> {
  const target = users.get(targetId)
  for (const mine of gameRows) {
    const theirs = await gameRelationshipBetween(mine.otherId, mine.userId, mine.applicationId)
    for (const row of theirs ? [mine, theirs] : [mine]) {
      await deleteGameRelationship(tx, row)
      gameRemoved(row)
    }
    const other = users.get(mine.otherId)
    if (mine.otherId === targetId || !other || !target) continue
    if (await gameRelationshipBetween(targetId, mine.otherId, mine.applicationId)) continue
    if (await blockedEitherWay(targetId, mine.otherId)) continue
    const moved = { ...mine, userId: targetId }
    await putGameRelationship(tx, moved)
    gameAdded(moved, other)
    if (theirs) {
      const back = { ...theirs, otherId: targetId }
      await putGameRelationship(tx, back)
      gameAdded(back, target)
    }
  }
}
