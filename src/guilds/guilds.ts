// Guild lifecycle and membership: create, rename, delete, join, leave, kick.
import { and, eq } from 'drizzle-orm'
import { clock } from '../core/clock'
import { ApiError, Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { findUser } from '../users/store'
import { guildAccess, permissionsOf, topPosition } from './access'
import { dropGuildTopics, syncMemberTopics } from './gateway'
import { DEFAULT_EVERYONE, has, P } from './permissions'
import { getGuild, getMember, guildChannels, guildsOfUser } from './store'
import { serializeGuild, serializeGuildForGateway, serializeMember } from './serialize'
import { channels, guilds, memberRoles, members, roles, type GuildRow } from './tables'

export function createGuild(ownerId: string, name: string) {
  const id = snowflake()
  const now = clock.now()
  transaction((tx) => {
    tx.insert(guilds).values({ id, name, ownerId, createdAt: now }).run()
    tx.insert(roles).values({ id, guildId: id, name: '@everyone', permissions: DEFAULT_EVERYONE.toString(), position: 0 }).run()
    tx.insert(members).values({ guildId: id, userId: ownerId, joinedAt: now }).run()
    tx.insert(channels).values({ id: snowflake(), guildId: id, type: 0, name: 'general', position: 0, createdAt: now }).run()
    tx.insert(channels).values({ id: snowflake(), guildId: id, type: 2, name: 'General', position: 1, createdAt: now }).run()
  })
  const guild = getGuild(id)!
  syncMemberTopics(id, ownerId)
  events.publish(topics.user(ownerId), 'GUILD_CREATE', serializeGuildForGateway(guild, getMember(id, ownerId)))
  return serializeGuild(guild)
}

export function renameGuild(userId: string, guildId: string, name: string | undefined) {
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId !== userId) throw Errors.missingPermissions()
  if (name !== undefined) transaction((tx) => tx.update(guilds).set({ name }).where(eq(guilds.id, guildId)).run())
  const body = serializeGuild(getGuild(guildId)!)
  events.publish(topics.guild(guildId), 'GUILD_UPDATE', body)
  return body
}

export function deleteGuild(userId: string, guildId: string): void {
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId !== userId) throw Errors.missingPermissions()
  const channelIds = guildChannels(guildId).map((c) => c.id)
  const memberIds = transaction((tx) => {
    const ids = tx.select({ id: members.userId }).from(members).where(eq(members.guildId, guildId)).all().map((r) => r.id)
    tx.delete(guilds).where(eq(guilds.id, guildId)).run()
    return ids
  })
  events.publish(topics.guild(guildId), 'GUILD_DELETE', { id: guildId })
  for (const id of memberIds) dropGuildTopics(id, guildId, channelIds)
}

class NotClaimed extends Error {}

/**
 * Add a user to a guild (invite acceptance). Returns false when already a member. `claim` (an invite's use) runs in
 * the same transaction once the member row is new; when it returns false nothing is written, so a use is counted
 * exactly when someone joined, even if the process dies in between.
 */
export function addMember(guild: GuildRow, userId: string, claim: () => boolean = () => true): boolean {
  let inserted: unknown
  try {
    inserted = transaction((tx) => {
      const row = tx.insert(members).values({ guildId: guild.id, userId, joinedAt: clock.now() }).onConflictDoNothing().returning().get()
      if (row && !claim()) throw new NotClaimed()
      return row
    })
  } catch (error) {
    if (error instanceof NotClaimed) return false
    throw error
  }
  if (!inserted) return false
  announceJoin(guild, userId)
  return true
}

async function announceJoin(guild: GuildRow, userId: string) {
  const member = getMember(guild.id, userId)!
  const user = await findUser(userId)
  events.publish(topics.guild(guild.id), 'GUILD_MEMBER_ADD', { guild_id: guild.id, ...serializeMember(member, user) })
  syncMemberTopics(guild.id, userId)
  events.publish(topics.user(userId), 'GUILD_CREATE', serializeGuildForGateway(guild, member))
}

function removeMember(guild: GuildRow, userId: string): Promise<void> {
  const channelIds = guildChannels(guild.id).map((c) => c.id)
  transaction((tx) => {
    tx.delete(memberRoles).where(and(eq(memberRoles.guildId, guild.id), eq(memberRoles.userId, userId))).run()
    tx.delete(members).where(and(eq(members.guildId, guild.id), eq(members.userId, userId))).run()
  })
  dropGuildTopics(userId, guild.id, channelIds)
  events.publish(topics.user(userId), 'GUILD_DELETE', { id: guild.id })
  return findUser(userId).then((user) => {
    events.publish(topics.guild(guild.id), 'GUILD_MEMBER_REMOVE', { guild_id: guild.id, user: user ? { id: user.id, username: user.username, global_name: user.globalName, discriminator: user.discriminator, avatar: user.avatar } : { id: userId } })
  })
}

export async function leaveGuild(userId: string, guildId: string): Promise<void> {
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId === userId) throw new ApiError(400, 50055, 'Invalid Guild')
  await removeMember(guild, userId)
}

export async function kickMember(actorId: string, guildId: string, targetId: string): Promise<void> {
  const { guild } = guildAccess(guildId, actorId, P.KICK_MEMBERS)
  if (!getMember(guildId, targetId)) throw Errors.unknownMember()
  if (targetId === guild.ownerId || (actorId !== guild.ownerId && topPosition(guild, targetId) >= topPosition(guild, actorId))) {
    throw Errors.missingPermissions()
  }
  await removeMember(guild, targetId)
}

/** The caller's guilds in id order, paged by `before`/`after` and `limit` as Discord's. */
export function myGuilds(userId: string, page: { limit: number; before?: string; after?: string }) {
  const id = (g: { id: string }) => BigInt(g.id)
  let list = guildsOfUser(userId).sort((a, b) => (id(a) < id(b) ? -1 : 1))
  if (page.after !== undefined) list = list.filter((g) => id(g) > BigInt(page.after!))
  if (page.before !== undefined) {
    list = list.filter((g) => id(g) < BigInt(page.before!))
    if (page.after === undefined) list = list.slice(-page.limit)
  }
  return list.slice(0, page.limit).map((g) => ({
    id: g.id,
    name: g.name,
    icon: null,
    banner: null,
    owner: g.ownerId === userId,
    permissions: permissionsOf(g, userId).toString(),
    features: g.features,
  }))
}

export function canManageChannels(guild: GuildRow, userId: string): boolean {
  return has(permissionsOf(guild, userId), P.MANAGE_CHANNELS)
}

/** Operator settings (CLI): features, hub type, vanity code. */
export function setGuildAttributes(guildId: string, input: { features?: string[]; hubType?: number | null; vanity?: string | null }) {
  const guild = getGuild(guildId)
  if (!guild) throw Errors.unknownGuild()
  const changes = {
    ...(input.features !== undefined ? { features: input.features } : {}),
    ...(input.hubType !== undefined ? { hubType: input.hubType } : {}),
    ...(input.vanity !== undefined ? { vanityUrlCode: input.vanity } : {}),
  }
  if (Object.keys(changes).length > 0) transaction((tx) => tx.update(guilds).set(changes).where(eq(guilds.id, guildId)).run())
  return serializeGuild(getGuild(guildId)!)
}
