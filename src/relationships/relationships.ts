// Relationships as Discord's user API has them (issue 45, part 1): a friend request sent by id or username, accepted by
// a request the other way, declined, cancelled or removed by DELETE; a block that ends a friendship and any request
// both ways; a friend's nickname. Each change is one transaction that first locks both users (in id order, so two
// changes of one pair take turns on PostgreSQL too, and 50 parallel accepts make one friendship), and its events are
// published inside it, so they go out once it commits (and with several nodes through the outbox).
import { findUserByUsername, findUsers, lockUser } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import type { UserRow } from '../accounts/tables'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { isSnowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { audiences, events } from '../gateway/bus'
import { endGameRelationshipsOfPair } from './game'
import { endGameInvitesOfPair } from './invites'
import { alreadyFriends, maxFriends, maxOutgoing, noSuchTag, notFriends, requestsDisabled, selfRequest } from './errors'
import { MAX_FRIENDS, MAX_OUTGOING_REQUESTS, RelationshipType as T } from './limits'
import { tellNewFriends } from './presence'
import {
  countRelationships,
  deleteRelationship,
  putRelationship,
  relationshipBetween,
  relationshipsOf,
  setNickname,
} from './store'
import type { RelationshipRow } from './tables'

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

/** Discord's relationship object: one user's view of another. */
export function relationshipObject(row: RelationshipRow, other: UserRow) {
  return {
    id: row.otherId,
    type: row.type,
    user: publicUser(other),
    nickname: row.nickname,
    is_spam_request: false,
    user_ignored: false,
    since: iso(row.since),
  }
}

/** The shape of RELATIONSHIP_UPDATE and RELATIONSHIP_REMOVE (no user object, as Discord). */
const partial = (row: RelationshipRow) => ({
  id: row.otherId,
  type: row.type,
  nickname: row.nickname,
  since: iso(row.since),
})

/** A user's relationships, with their users (one query for them); oldest first. */
export async function listRelationships(userId: string) {
  const rows = (await relationshipsOf(userId)).sort((a, b) => a.since - b.since || (a.otherId < b.otherId ? -1 : 1))
  const users = await findUsers(rows.map((r) => r.otherId))
  return rows.flatMap((r) => {
    const u = users.get(r.otherId)
    return u ? [relationshipObject(r, u)] : []
  })
}

/** An account others may befriend or block: it exists and is active. */
async function activeUser(id: string): Promise<UserRow | undefined> {
  if (!isSnowflake(id)) return undefined
  const u = (await findUsers([id])).get(id)
  return u && u.state === 'active' ? u : undefined
}

/** Who may see relationship events (gateway/bus.ts sees): user sessions, and OAuth2 ones with relationships.read. */
const audience = audiences.relationships

export function added(row: RelationshipRow, other: UserRow): void {
  events.publishToUser(row.userId, audience, 'RELATIONSHIP_ADD', {
    ...relationshipObject(row, other),
    should_notify: row.type === T.INCOMING_REQUEST,
  })
}
export function removed(row: RelationshipRow): void {
  events.publishToUser(row.userId, audience, 'RELATIONSHIP_REMOVE', partial(row))
}

/** Lock both users in id order, then read what each has with the other. */
async function lockedPair(tx: DB, me: string, other: string) {
  for (const id of [me, other].sort()) await lockUser(tx, id)
  return { mine: await relationshipBetween(me, other), theirs: await relationshipBetween(other, me) }
}

/**
 * PUT with no type (or -1, or 1): send a friend request, or accept the one `target` sent. Already friends: nothing
 * changes (so parallel accepts are one friendship). `byUsername` answers 80007 for a friend, as Discord's POST does.
 */
export async function requestOrAccept(me: UserRow, targetId: string, byUsername = false): Promise<void> {
  if (targetId === me.id) throw selfRequest()
  const target = await activeUser(targetId)
  if (!target) throw byUsername ? noSuchTag() : Errors.unknownUser()
  if (target.bot) throw requestsDisabled()
  let accepted = false
  await transaction(async (tx) => {
    const { mine, theirs } = await lockedPair(tx, me.id, target.id)
    if (theirs?.type === T.BLOCKED) throw requestsDisabled()
    if (mine?.type === T.FRIEND) {
      if (byUsername) throw alreadyFriends()
      return
    }
    if (mine?.type === T.OUTGOING_REQUEST) return
    const now = clock.now()
    if (mine?.type === T.INCOMING_REQUEST) {
      // Accept: both sides must have room.
      if ((await countRelationships(me.id, T.FRIEND)) >= MAX_FRIENDS) throw maxFriends()
      if ((await countRelationships(target.id, T.FRIEND)) >= MAX_FRIENDS) throw maxFriends()
      const a = { userId: me.id, otherId: target.id, type: T.FRIEND, nickname: null, since: now }
      const b = { userId: target.id, otherId: me.id, type: T.FRIEND, nickname: null, since: now }
      await putRelationship(tx, a)
      await putRelationship(tx, b)
      added(a, target)
      added(b, me)
      accepted = true
      return
    }
    // A new request (sending one to a user one has blocked lifts the block, as Discord's client does).
    if ((await countRelationships(me.id, T.FRIEND)) >= MAX_FRIENDS) throw maxFriends()
    if ((await countRelationships(me.id, T.OUTGOING_REQUEST)) >= MAX_OUTGOING_REQUESTS) throw maxOutgoing()
    const a = { userId: me.id, otherId: target.id, type: T.OUTGOING_REQUEST, nickname: null, since: now }
    const b = { userId: target.id, otherId: me.id, type: T.INCOMING_REQUEST, nickname: null, since: now }
    if (mine) removed(mine)
    await putRelationship(tx, a)
    await putRelationship(tx, b)
    added(a, target)
    added(b, me)
  })
  if (accepted) await tellNewFriends(me.id, target.id)
}

/** POST { username }: a request to the user with that name; an unknown (or inactive) one is Discord's 80004. */
export async function requestByUsername(me: UserRow, username: string, discriminator?: string | null): Promise<void> {
  const target = await findUserByUsername(username)
  if (!target || (discriminator && discriminator !== '0' && discriminator !== target.discriminator)) throw noSuchTag()
  await requestOrAccept(me, target.id, true)
}

/**
 * PUT { type: 2 }: block. Ends a friendship and a request either way, and the pair's game relationships and game
 * invites in every game;
 * the other side's own block stays.
 */
export async function block(me: UserRow, targetId: string): Promise<void> {
  if (targetId === me.id) throw selfRequest()
  const target = await activeUser(targetId)
  if (!target) throw Errors.unknownUser()
  await transaction(async (tx) => {
    const { mine, theirs } = await lockedPair(tx, me.id, target.id)
    if (mine?.type === T.BLOCKED) return
    if (theirs && theirs.type !== T.BLOCKED) {
      await deleteRelationship(tx, target.id, me.id)
      removed(theirs)
    }
    if (mine) removed(mine)
    await endGameRelationshipsOfPair(tx, me.id, target.id)
    await endGameInvitesOfPair(tx, me.id, target.id)
    const row = { userId: me.id, otherId: target.id, type: T.BLOCKED, nickname: null, since: clock.now() }
    await putRelationship(tx, row)
    added(row, target)
  })
}

/**
 * DELETE: remove a friend, cancel an outgoing request or decline an incoming one (both sides' rows go), or unblock
 * (the blocker's row only). Nothing there: nothing to do.
 */
export async function removeRelationship(me: UserRow, targetId: string): Promise<void> {
  if (!isSnowflake(targetId)) throw Errors.unknownUser()
  await transaction(async (tx) => {
    const { mine, theirs } = await lockedPair(tx, me.id, targetId)
    if (!mine) return
    await deleteRelationship(tx, me.id, targetId)
    removed(mine)
    if (mine.type !== T.BLOCKED && theirs && theirs.type !== T.BLOCKED) {
      await deleteRelationship(tx, targetId, me.id)
      removed(theirs)
    }
  })
}

/** PATCH { nickname }: a friend's nickname (null or empty clears it); RELATIONSHIP_UPDATE to the user's sessions. */
export async function renameFriend(me: UserRow, targetId: string, nickname: string | null | undefined): Promise<void> {
  if (!isSnowflake(targetId)) throw Errors.unknownUser()
  const value = nickname ? nickname : null
  await transaction(async (tx) => {
    const mine = await relationshipBetween(me.id, targetId)
    if (mine?.type !== T.FRIEND) throw notFriends()
    if (mine.nickname === value) return
    await setNickname(tx, me.id, targetId, value)
    events.publishToUser(me.id, audience, 'RELATIONSHIP_UPDATE', partial({ ...mine, nickname: value }))
  })
}
