// Game invites (issue 45, part 4), after discord-userdoccers game-invite.mdx (the object's names: invite_id, ttl,
// inviter_id, recipient_id, application_name; POST/DELETE /game-invite/@me) and the Social SDK's managing-game-invites
// guide (SendActivityInvite, SendActivityJoinRequest, the ActivityActionTypes JOIN 1 and JOIN_REQUEST 5):
// - JOIN: a player invites a friend (Discord-wide, or a game friend of this application) to what it is playing: its
//   current activity of the application, which must have a party and a join secret. The invite carries that activity;
//   only the recipient's copy has the join secret (the lobby's secret: accepting is PUT /lobbies with it).
// - JOIN_REQUEST ("ask to join"): a player asks a friend whose activity of the application is joinable; the friend
//   answers with a JOIN invite, which ends the request.
// An invite lives `ttl` seconds (300-86400, default 900), then nobody sees it; one per type, sender, recipient and game
// (a new one replaces the old). A block either way refuses it (50007, as a message to that user would be) and ends the
// pair's invites. GAME_INVITE_CREATE / GAME_INVITE_DELETE go to both users' sessions that see the game.
import { findUsers } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { isSnowflake, snowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { audiences, events } from '../gateway/bus'
import { cannotInvite, notJoinable } from './errors'
import { gameFriends } from './game'
import { applicationName, authorized } from './game-port'
import {
  deleteExpiredInvites,
  deleteExpiredInvitesOf,
  deleteGameInvite,
  gameInvite,
  gameInvitesOfPair,
  insertGameInvite,
  liveGameInvitesOf,
} from './game-store'
import { GAME_INVITE_TTL, InviteType, RelationshipType as T } from './limits'
import { presenceOf } from './presence-store'
import { blockedEitherWay, relationshipBetween } from './store'
import type { Activity, GameInviteRow } from './tables'

const iso = (ms: number) => new Date(ms).toISOString().replace('Z', '+00:00')

/** The invite as `viewerId` sees it: the activity's secrets never, except the join secret to a JOIN's recipient. */
export function inviteObject(row: GameInviteRow, viewerId: string, appName: string) {
  let activity: Activity | null = null
  if (row.activity) {
    const { secrets, ...rest } = row.activity
    activity =
      viewerId === row.recipientId && row.type === InviteType.JOIN
        ? { ...rest, secrets: { join: secrets?.join } }
        : rest
  }
  return {
    invite_id: row.id,
    type: row.type,
    application_id: row.applicationId,
    application_name: appName,
    inviter_id: row.senderId,
    recipient_id: row.recipientId,
    created_at: iso(row.createdAt),
    ttl: Math.round((row.expiresAt - row.createdAt) / 1000),
    content: row.content,
    activity,
  }
}

async function tellBoth(row: GameInviteRow, type: 'GAME_INVITE_CREATE' | 'GAME_INVITE_DELETE'): Promise<void> {
  const audience = audiences.game(row.applicationId)
  const both = [row.senderId, row.recipientId]
  if (type === 'GAME_INVITE_DELETE') {
    const data = { invite_id: row.id, application_id: row.applicationId }
    for (const id of both) events.publishToUser(id, audience, 'GAME_INVITE_DELETE', data)
    return
  }
  const name = (await applicationName(row.applicationId)) ?? ''
  for (const id of both) events.publishToUser(id, audience, 'GAME_INVITE_CREATE', inviteObject(row, id, name))
}

/** The user's activity of the application that others may join: a party and a join secret. */
async function joinableActivity(userId: string, applicationId: string): Promise<Activity | undefined> {
  const row = await presenceOf(userId)
  return row?.activities.find((a) => a.application_id === applicationId && a.secrets?.join && a.party?.id)
}

/** Friends Discord-wide, or in this application's game. */
async function friendsHere(a: string, b: string, applicationId: string): Promise<boolean> {
  return (await relationshipBetween(a, b))?.type === T.FRIEND || (await gameFriends(a, b, applicationId))
}

export async function sendGameInvite(
  me: UserRow,
  applicationId: string,
  input: { recipient_id: string; type?: number; content?: string; ttl?: number | null },
) {
  const type = input.type ?? InviteType.JOIN
  const recipientId = input.recipient_id
  const recipient = isSnowflake(recipientId) ? (await findUsers([recipientId])).get(recipientId) : undefined
  if (!recipient || recipient.state !== 'active' || !(await authorized(recipient.id, applicationId)))
    throw Errors.unknownUser()
  if (recipient.id === me.id || !(await friendsHere(me.id, recipient.id, applicationId))) throw cannotInvite()
  // JOIN: what the sender plays; JOIN_REQUEST: the asked friend must be in something joinable.
  const activity = await joinableActivity(type === InviteType.JOIN ? me.id : recipient.id, applicationId)
  if (!activity) throw notJoinable()
  const now = clock.now()
  const row: GameInviteRow = {
    id: snowflake(),
    applicationId,
    senderId: me.id,
    recipientId: recipient.id,
    type,
    activity: type === InviteType.JOIN ? activity : null,
    content: input.content ?? '',
    createdAt: now,
    expiresAt: now + (input.ttl ?? GAME_INVITE_TTL.default) * 1000,
  }
  await transaction(async (tx) => {
    // Checked again inside: a block given meanwhile ends the pair's invites in its own transaction.
    if (await blockedEitherWay(me.id, recipient.id)) throw cannotInvite()
    await deleteExpiredInvitesOf(tx, me.id, now)
    for (const old of await gameInvitesOfPair(me.id, recipient.id)) {
      if (old.applicationId !== applicationId) continue
      // The same invite again replaces the old one; a JOIN answers the recipient's request to join.
      const replaced = old.senderId === me.id && old.type === type
      const answered = type === InviteType.JOIN && old.senderId === recipient.id && old.type === InviteType.JOIN_REQUEST
      if (replaced || answered) await dropInvite(tx, old)
    }
    await insertGameInvite(tx, row)
    await tellBoth(row, 'GAME_INVITE_CREATE')
  })
  return { invite_id: row.id }
}

async function dropInvite(tx: DB, row: GameInviteRow): Promise<void> {
  await deleteGameInvite(tx, row.id)
  if (row.expiresAt > clock.now()) await tellBoth(row, 'GAME_INVITE_DELETE')
}

/** The invites the user sent or received that live (of one application, if given), newest first. */
export async function listGameInvites(userId: string, applicationId?: string) {
  const rows = (await liveGameInvitesOf(userId, clock.now(), applicationId)).sort((a, b) => b.createdAt - a.createdAt)
  const names = new Map<string, string>()
  for (const id of new Set(rows.map((r) => r.applicationId))) names.set(id, (await applicationName(id)) ?? '')
  return rows.map((r) => inviteObject(r, userId, names.get(r.applicationId) ?? ''))
}

/** DELETE: the sender takes its invite back, or the recipient declines it; anyone else, or an expired one: 10006. */
export async function deleteInvite(me: UserRow, inviteId: string, applicationId?: string): Promise<void> {
  const row = isSnowflake(inviteId) ? await gameInvite(inviteId) : undefined
  const mine = row && (row.senderId === me.id || row.recipientId === me.id)
  if (!row || !mine || row.expiresAt <= clock.now() || (applicationId && row.applicationId !== applicationId))
    throw Errors.unknownInvite()
  await transaction(async (tx) => await dropInvite(tx, row))
}

/** A block between the pair (inside its transaction): their invites end, in every game. */
export async function endGameInvitesOfPair(tx: DB, a: string, b: string): Promise<void> {
  for (const row of await gameInvitesOfPair(a, b)) await dropInvite(tx, row)
}

/** A provisional account merged away (inside the merge's transaction): its invites end. */
export async function endGameInvitesOf(tx: DB, userId: string): Promise<void> {
  for (const row of await liveGameInvitesOf(userId, 0)) await dropInvite(tx, row)
}

/** The module's sweep (every 10 minutes): expired invites go. */
export async function sweepGameInvites(): Promise<void> {
  await deleteExpiredInvites(clock.now())
}
