// Invites: created on a channel (CREATE_INSTANT_INVITE), listed (a guild's, a channel's), looked up, accepted
// (atomic use count, expiry, target user, not for a banned user), deleted.
import { randomBytes } from 'node:crypto'
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { transaction } from '../db/client'
import type { CamelKeys } from '../http/camel'
import { events, topics } from '../gateway/bus'
import { cachedUser } from '../accounts/store'
import { channelAccess, guildAccess, permissionsOf } from './access'
import { isBanned } from './bans'
import { bannedFromGuild } from './errors'
import { addMember } from './lifecycle'
import { has } from './permissions'
import { cachedChannel, cachedGuild, cachedGuildMember } from './store'
import { claimInviteUse, deleteInviteRow, getInvite, insertInvite, liveInvites, reusableInvite } from './invites-store'
import type { InviteSchema } from './schemas'
import { serializeInvite } from './serialize'
import type { InviteRow } from './tables'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** 10 characters from 62: ~59 bits, unguessable by brute force against rate-limited lookups. */
function inviteCode(): string {
  let code = ''
  while (code.length < 10) {
    const byte = randomBytes(1)[0]
    if (byte < 248) code += ALPHABET[byte % 62]
  }
  return code
}

/** POST /channels/{id}/invites's body (schemas.ts), its keys in camelCase. */
export type InviteInput = CamelKeys<NonNullable<typeof InviteSchema.static>>

/** Create (or, unless `unique`, reuse) an invite to a channel the inviter may invite to. */
export async function createInvite(userId: string, channelId: string, input: InviteInput) {
  const { channel, guild } = await channelAccess(channelId, userId, Permission.CREATE_INSTANT_INVITE)
  if (input.targetUserId && !(await cachedUser(input.targetUserId))) throw Errors.unknownUser()
  const maxAge = input.maxAge ?? 86400
  const maxUses = input.maxUses ?? 0
  const temporary = input.temporary ?? false
  const now = clock.now()
  if (!input.unique && !input.targetUserId) {
    const existing = await reusableInvite(channel.id, userId, maxAge, maxUses, temporary, now)
    if (existing) return serializeInvite(existing, guild, channel)
  }
  return await transaction(async (tx) => {
    const row = await insertInvite(tx, {
      code: inviteCode(),
      guildId: guild.id,
      channelId: channel.id,
      inviterId: userId,
      targetUserId: input.targetUserId ?? null,
      maxAge,
      maxUses,
      temporary,
      createdAt: now,
      expiresAt: maxAge === 0 ? null : now + maxAge * 1000,
    })
    const body = await serializeInvite(row, guild, channel)
    events.publish(topics.channel(channel.id), 'INVITE_CREATE', {
      channel_id: channel.id,
      guild_id: guild.id,
      code: row.code,
      created_at: body.created_at,
      inviter: body.inviter,
      max_age: maxAge,
      max_uses: maxUses,
      temporary,
      uses: 0,
      ...(body.target_user ? { target_type: 1, target_user: body.target_user } : {}),
    })
    return body
  })
}

/**
 * The invites still usable, with their counts: a guild's (MANAGE_GUILD) or a channel's (MANAGE_CHANNELS), as
 * Discord's GET /guilds/{id}/invites and GET /channels/{id}/invites.
 */
export async function listInvites(userId: string, where: { guildId: string } | { channelId: string }) {
  const { guild, channel } =
    'guildId' in where
      ? { ...(await guildAccess(where.guildId, userId, Permission.MANAGE_GUILD)), channel: undefined }
      : await channelAccess(where.channelId, userId, Permission.MANAGE_CHANNELS)
  const rows = await liveInvites(channel ? { channelId: channel.id } : { guildId: guild.id }, clock.now())
  const out = []
  for (const row of rows) {
    const at = channel ?? (await cachedChannel(row.channelId))
    if (at) out.push(await serializeInvite(row, guild, at))
  }
  return out
}

function live(invite: InviteRow | undefined, now: number): invite is InviteRow {
  return (
    !!invite &&
    (invite.expiresAt === null || invite.expiresAt > now) &&
    (invite.maxUses === 0 || invite.uses < invite.maxUses)
  )
}

export async function lookupInvite(code: string) {
  const invite = await getInvite(code)
  if (!live(invite, clock.now())) throw Errors.unknownInvite()
  const guild = (await cachedGuild(invite.guildId))!
  const channel = (await cachedChannel(invite.channelId))!
  return serializeInvite(invite, guild, channel)
}

/**
 * Join the invite's guild. A targeted invite works only for its target; uses and expiry are claimed atomically.
 * A member who is already in the guild gets the invite back without using it.
 */
export async function joinGuildByInvite(userId: string, code: string) {
  const existing = await getInvite(code)
  if (!existing || (existing.targetUserId && existing.targetUserId !== userId)) throw Errors.unknownInvite()
  const guild = await cachedGuild(existing.guildId)
  const channel = await cachedChannel(existing.channelId)
  if (!guild || !channel) throw Errors.unknownInvite()
  if (await cachedGuildMember(guild.id, userId)) {
    if (!live(existing, clock.now())) throw Errors.unknownInvite()
    return { ...(await serializeInvite(existing, guild, channel)), new_member: false }
  }
  if (await isBanned(guild.id, userId)) throw bannedFromGuild()
  // The use is claimed in the transaction that adds the member: counted exactly when someone joined.
  let claimed: InviteRow | undefined
  if (
    !(await addMember(guild, userId, async () => !!(claimed = await claimInviteUse(code, clock.now(), userId)))) ||
    !claimed
  ) {
    if ((await cachedGuildMember(guild.id, userId)) && live(existing, clock.now()))
      return { ...(await serializeInvite(existing, guild, channel)), new_member: false }
    throw Errors.unknownInvite()
  }
  return { ...(await serializeInvite(claimed, guild, channel)), new_member: true }
}

export async function deleteInvite(userId: string, code: string) {
  const invite = await getInvite(code)
  if (!invite) throw Errors.unknownInvite()
  const guild = await cachedGuild(invite.guildId)
  const channel = await cachedChannel(invite.channelId)
  if (!guild || !channel || !(await cachedGuildMember(guild.id, userId))) throw Errors.unknownInvite()
  const perms = await permissionsOf(guild, userId)
  if (invite.inviterId !== userId && !has(perms, Permission.MANAGE_CHANNELS) && !has(perms, Permission.MANAGE_GUILD))
    throw Errors.missingPermissions()
  await transaction(async (tx) => {
    await deleteInviteRow(tx, code)
    events.publish(topics.channel(channel.id), 'INVITE_DELETE', { channel_id: channel.id, guild_id: guild.id, code })
  })
  return serializeInvite(invite, guild, channel)
}
