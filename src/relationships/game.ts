// Game relationships (issue 45, part 2; discord-userdoccers relationships.mdx "Game Relationship Object"): friends that
// exist only inside one application's game, made with an OAuth2 token of that application (a provisional account's
// too): a game friend request by id or username, accepted by a request the other way, removed, cancelled or declined by
// DELETE; GAME_RELATIONSHIP_ADD / REMOVE to both users' sessions that see the application's game (gateway/bus.ts).
// Both users must have authorized the application. They do not count toward Discord's 1000 friends, and there is no
// cap on game friends per game (the "no limit per game"); pending outgoing requests are capped per game as
// Discord-wide ones are. Blocks are the Discord-wide list's: a block either way refuses a request or an accept (80000),
// and a block ends the pair's game relationships in every game (relationships.ts block).
import { findUserByUsername, findUsers, lockUser } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import type { UserRow } from '../accounts/tables'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { isSnowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { audiences, events } from '../gateway/bus'
import { maxOutgoing, noSuchTag, requestsDisabled, selfRequest } from './errors'
import { authorized } from './game-port'
import {
  countGameRelationships,
  deleteGameRelationship,
  gameRelationshipBetween,
  gameRelationshipsOf,
  gameRelationshipsOfPair,
  putGameRelationship,
} from './game-store'
import { MAX_OUTGOING_REQUESTS, RelationshipType as T } from './limits'
import { blockedEitherWay } from './store'
import type { GameRelationshipRow } from './tables'

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

/** Discord's game relationship object: one user's view of another in one application's game. */
export function gameRelationshipObject(row: GameRelationshipRow, other: UserRow) {
  return {
    id: row.otherId,
    application_id: row.applicationId,
    type: row.type,
    user: publicUser(other),
    since: iso(row.since),
    dm_access_type: 0,
    user_id: row.userId,
  }
}

/** A user's game relationships (of one application, if given), with their users; oldest first. */
export async function listGameRelationships(userId: string, applicationId?: string) {
  const rows = (await gameRelationshipsOf(userId, applicationId)).sort(
    (a, b) => a.since - b.since || (a.otherId < b.otherId ? -1 : 1),
  )
  const users = await findUsers(rows.map((r) => r.otherId))
  return rows.flatMap((r) => {
    const u = users.get(r.otherId)
    return u ? [gameRelationshipObject(r, u)] : []
  })
}

export function gameAdded(row: GameRelationshipRow, other: UserRow): void {
  events.publishToUser(row.userId, audiences.game(row.applicationId), 'GAME_RELATIONSHIP_ADD', {
    ...gameRelationshipObject(row, other),
    should_notify: row.type === T.INCOMING_REQUEST,
  })
}

export function gameRemoved(row: GameRelationshipRow): void {
  events.publishToUser(row.userId, audiences.game(row.applicationId), 'GAME_RELATIONSHIP_REMOVE', {
    id: row.otherId,
    application_id: row.applicationId,
    type: row.type,
    since: iso(row.since),
    user_id: row.userId,
  })
}

async function lockBoth(tx: DB, a: string, b: string): Promise<void> {
  for (const id of [a, b].sort()) await lockUser(tx, id)
}

/**
 * PUT (no type, -1 or 1): send a game friend request in the application's game, or accept the one `targetId` sent.
 * The target must be an active account that authorized the application (else 10013, or 80004 by username).
 */
export async function gameRequestOrAccept(
  me: UserRow,
  applicationId: string,
  targetId: string,
  byUsername = false,
): Promise<void> {
  if (targetId === me.id) throw selfRequest()
  const found = isSnowflake(targetId) ? (await findUsers([targetId])).get(targetId) : undefined
  const target = found?.state === 'active' && (await authorized(found.id, applicationId)) ? found : undefined
  if (!target) throw byUsername ? noSuchTag() : Errors.unknownUser()
  if (target.bot) throw requestsDisabled()
  await transaction(async (tx) => {
    await lockBoth(tx, me.id, target.id)
    if (await blockedEitherWay(me.id, target.id)) throw requestsDisabled()
    const mine = await gameRelationshipBetween(me.id, target.id, applicationId)
    if (mine?.type === T.FRIEND || mine?.type === T.OUTGOING_REQUEST) return
    const now = clock.now()
    const pair = (mineType: number, theirType: number) => [
      { userId: me.id, otherId: target.id, applicationId, type: mineType, since: now },
      { userId: target.id, otherId: me.id, applicationId, type: theirType, since: now },
    ]
    const accept = mine?.type === T.INCOMING_REQUEST
    if (!accept && (await countGameRelationships(me.id, applicationId, T.OUTGOING_REQUEST)) >= MAX_OUTGOING_REQUESTS)
      throw maxOutgoing()
    const [a, b] = accept ? pair(T.FRIEND, T.FRIEND) : pair(T.OUTGOING_REQUEST, T.INCOMING_REQUEST)
    await putGameRelationship(tx, a)
    await putGameRelationship(tx, b)
    gameAdded(a, target)
    gameAdded(b, me)
  })
}

/** POST { username }: a game friend request to the user of that name (80004 when none, or it never authorized). */
export async function gameRequestByUsername(me: UserRow, applicationId: string, username: string): Promise<void> {
  const target = await findUserByUsername(username)
  if (!target) throw noSuchTag()
  await gameRequestOrAccept(me, applicationId, target.id, true)
}

/** DELETE: remove a game friend, cancel or decline a game friend request (both sides' rows go). */
export async function removeGameRelationship(me: UserRow, applicationId: string, targetId: string): Promise<void> {
  if (!isSnowflake(targetId)) throw Errors.unknownUser()
  await transaction(async (tx) => {
    await lockBoth(tx, me.id, targetId)
    const mine = await gameRelationshipBetween(me.id, targetId, applicationId)
    if (!mine) return
    const theirs = await gameRelationshipBetween(targetId, me.id, applicationId)
    for (const row of theirs ? [mine, theirs] : [mine]) {
      await deleteGameRelationship(tx, row)
      gameRemoved(row)
    }
  })
}

/** A block between the pair (inside its transaction, both users locked): their game relationships end everywhere. */
export async function endGameRelationshipsOfPair(tx: DB, a: string, b: string): Promise<void> {
  for (const row of await gameRelationshipsOfPair(a, b)) {
    await deleteGameRelationship(tx, row)
    gameRemoved(row)
  }
}

/** Whether the two are friends in the application's game. */
export async function gameFriends(a: string, b: string, applicationId: string): Promise<boolean> {
  return (await gameRelationshipBetween(a, b, applicationId))?.type === T.FRIEND
}
