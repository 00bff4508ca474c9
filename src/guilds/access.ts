// Who may see and do what in a guild. Non-members get 404 (never a hint that a guild or channel exists);
// members without a permission get 403 50013.
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { computePermissions, has } from './permissions'
import { cachedChannel, cachedGuild, cachedGuildMember, cachedGuildRoles, cachedMemberRoleIds } from './store'
import { dmAccess, type MessageAccess } from './dm-channels'
import type { ChannelRow, GuildChannelRow, GuildRow, MemberRow, RoleRow } from './tables'

export async function permissionsOf(guild: GuildRow, userId: string): Promise<bigint> {
  return await memberPermissions(guild, (await cachedGuildMember(guild.id, userId)) ?? { userId })
}

async function memberPermissions(guild: GuildRow, member: Member): Promise<bigint> {
  const roleIds = await cachedMemberRoleIds(guild.id, member.userId)
  return permissionsFrom(guild, member, await cachedGuildRoles(guild.id), roleIds)
}

type Member = Pick<MemberRow, 'userId'> & Partial<Pick<MemberRow, 'communicationDisabledUntil'>>

/** A member's permissions from the guild's roles and the member's role ids, already read; less while timed out. */
export function permissionsFrom(guild: GuildRow, member: Member, all: RoleRow[], roleIds: string[]): bigint {
  const everyone = all.find((r) => r.id === guild.id)
  const mine = new Set(roleIds)
  return computePermissions({
    isOwner: guild.ownerId === member.userId,
    everyone: BigInt(everyone?.permissions ?? '0'),
    roles: all.filter((r) => mine.has(r.id)).map((r) => BigInt(r.permissions)),
    timedOut: (member.communicationDisabledUntil ?? 0) > clock.now(),
  })
}

/** The highest role position a member holds (owner: above every role). */
export async function topPosition(guild: GuildRow, userId: string): Promise<number> {
  if (guild.ownerId === userId) return Number.MAX_SAFE_INTEGER
  const mine = new Set(await cachedMemberRoleIds(guild.id, userId))
  return (await cachedGuildRoles(guild.id)).reduce(
    (top, r) => (mine.has(r.id) && r.position > top ? r.position : top),
    0,
  )
}

/**
 * Whether the actor may moderate the target (kick, ban, rename): no one may the owner, the owner anyone else;
 * anyone else only a member whose highest role sits below its own.
 */
export async function outranks(guild: GuildRow, actorId: string, targetId: string): Promise<boolean> {
  if (targetId === guild.ownerId) return false
  if (actorId === guild.ownerId) return true
  return (await topPosition(guild, targetId)) < (await topPosition(guild, actorId))
}

export type GuildAccess = { guild: GuildRow; member: MemberRow; permissions: bigint }

export async function guildAccess(guildId: string, userId: string, needed: bigint = 0n): Promise<GuildAccess> {
  const guild = await cachedGuild(guildId)
  const member = guild && (await cachedGuildMember(guild.id, userId))
  if (!guild || !member) throw Errors.unknownGuild()
  const permissions = await memberPermissions(guild, member)
  if (!has(permissions, needed)) throw Errors.missingPermissions()
  return { guild, member, permissions }
}

export type ChannelAccess = GuildAccess & { channel: GuildChannelRow }

/** A guild's channel the user can see (VIEW_CHANNEL), plus any further permission needed; a DM is 404 here. */
export async function channelAccess(channelId: string, userId: string, needed: bigint = 0n): Promise<ChannelAccess> {
  return await guildChannelAccess(await cachedChannel(channelId), userId, needed)
}

async function guildChannelAccess(
  channel: ChannelRow | undefined,
  userId: string,
  needed: bigint,
): Promise<ChannelAccess> {
  const guild = channel?.guildId ? await cachedGuild(channel.guildId) : undefined
  const member = guild && (await cachedGuildMember(guild.id, userId))
  if (!channel || !guild || !member) throw Errors.unknownChannel()
  const permissions = await memberPermissions(guild, member)
  if (!has(permissions, Permission.VIEW_CHANNEL)) throw Errors.missingPermissions()
  if (!has(permissions, needed)) throw Errors.missingPermissions()
  return { guild, member, channel: channel as GuildChannelRow, permissions }
}

/**
 * A channel whose messages the user may touch: a guild's (as channelAccess) or a DM it is a recipient of
 * (dm-channels.ts); the message routes take both.
 */
export async function messageAccess(channelId: string, userId: string, needed: bigint = 0n): Promise<MessageAccess> {
  const channel = await cachedChannel(channelId)
  if (channel && channel.guildId === null) return await dmAccess(channel, userId, needed)
  return await guildChannelAccess(channel, userId, needed)
}
