// Guild lifecycle and membership: create, rename, delete, join, leave, kick (bans: bans.ts).
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { audiences, events, topics } from '../gateway/bus'
import { cachedUser } from '../accounts/store'
import { guildAccess, outranks, permissionsOf } from './access'
import { invalidGuild } from './errors'
import { dropGuildTopics, syncMemberTopics } from './gateway'
import { DEFAULT_EVERYONE } from './permissions'
import {
  deleteGuildRow,
  deleteMember,
  cachedGuild,
  cachedGuildMember,
  cachedGuildRoles,
  deleteRoleRow,
  guildChannels,
  guildsOfUser,
  insertChannel,
  insertGuild,
  insertMember,
  insertRole,
  memberUserIds,
  updateGuild,
} from './store'
import { serializeGuild, serializeGuildForGateway, serializeMember } from './serialize'
import type { GuildRow, MemberRow } from './tables'

export async function createGuild(ownerId: string, name: string) {
  const id = snowflake()
  const now = clock.now()
  const guild = await transaction(async (tx) => {
    await insertGuild(tx, { id, name, ownerId, createdAt: now })
    await insertRole(tx, { id, guildId: id, name: '@everyone', permissions: DEFAULT_EVERYONE.toString(), position: 0 })
    await insertMember(tx, { guildId: id, userId: ownerId, joinedAt: now })
    await insertChannel(tx, {
      id: snowflake(),
      guildId: id,
      type: ChannelType.GUILD_TEXT,
      name: 'general',
      position: 0,
      createdAt: now,
    })
    await insertChannel(tx, {
      id: snowflake(),
      guildId: id,
      type: ChannelType.GUILD_VOICE,
      name: 'General',
      position: 1,
      createdAt: now,
    })
    // The owner's sessions follow it and hear of it: read and given in the transaction (its outbox rows).
    const guild = (await cachedGuild(id))!
    await syncMemberTopics(id, ownerId)
    events.publishToUser(
      ownerId,
      audiences.guilds,
      'GUILD_CREATE',
      await serializeGuildForGateway(guild, await cachedGuildMember(id, ownerId)),
    )
    return guild
  })
  return await serializeGuild(guild)
}

/** Rename a guild: MANAGE_GUILD (the owner has it), as Discord's Modify Guild. */
export async function renameGuild(userId: string, guildId: string, name: string | undefined) {
  await guildAccess(guildId, userId, Permission.MANAGE_GUILD)
  return await transaction(async (tx) => {
    if (name !== undefined) await updateGuild(tx, guildId, { name })
    const body = await serializeGuild((await cachedGuild(guildId))!)
    events.publish(topics.guild(guildId), 'GUILD_UPDATE', body)
    return body
  })
}

export async function deleteGuild(userId: string, guildId: string): Promise<void> {
  const { guild } = await guildAccess(guildId, userId)
  if (guild.ownerId !== userId) throw Errors.missingPermissions()
  const channelIds = (await guildChannels(guildId)).map((c) => c.id)
  await transaction(async (tx) => {
    const memberIds = await memberUserIds(guildId, tx)
    await deleteGuildRow(tx, guildId)
    events.publish(topics.guild(guildId), 'GUILD_DELETE', { id: guildId })
    dropGuildTopics(memberIds, guildId, channelIds)
  })
}

class NotClaimed extends Error {}

/**
 * Add a user to a guild (invite acceptance). Returns false when already a member. `claim` (an invite's use) runs in
 * the same transaction once the member row is new; when it returns false nothing is written, so a use is counted
 * exactly when someone joined, even if the process dies in between; so are the join's events.
 */
export async function addMember(
  guild: GuildRow,
  userId: string,
  claim: () => Promise<boolean> = async () => true,
): Promise<boolean> {
  try {
    return await transaction(async (tx) => {
      const row = await insertMember(tx, { guildId: guild.id, userId, joinedAt: clock.now() })
      if (!row) return false
      if (!(await claim())) throw new NotClaimed()
      await announceJoin(guild, row)
      return true
    })
  } catch (error) {
    if (error instanceof NotClaimed) return false
    throw error
  }
}

/** Inside the join's transaction: the members hear of the new one, whose sessions follow the guild and get it. */
export async function announceJoin(guild: GuildRow, member: MemberRow) {
  const userId = member.userId
  const user = await cachedUser(userId)
  events.publish(topics.guild(guild.id), 'GUILD_MEMBER_ADD', {
    guild_id: guild.id,
    ...(await serializeMember(member, user)),
  })
  await syncMemberTopics(guild.id, userId)
  events.publishToUser(userId, audiences.guilds, 'GUILD_CREATE', await serializeGuildForGateway(guild, member))
}

async function removeMember(guild: GuildRow, userId: string): Promise<void> {
  const channelIds = (await guildChannels(guild.id)).map((c) => c.id)
  await transaction(async (tx) => {
    await deleteMember(tx, guild.id, userId)
    await announceLeave(tx, guild, userId, channelIds)
  })
}

/**
 * In the transaction that deleted a member's row (left, kicked, banned): its sessions drop the guild, the members hear
 * of it. A bot's managed role goes with it, as Discord's.
 */
export async function announceLeave(tx: DB, guild: GuildRow, userId: string, channelIds: string[]): Promise<void> {
  const managed = (await cachedGuildRoles(guild.id)).find((r) => r.botId === userId)
  if (managed) {
    await deleteRoleRow(tx, managed.id)
    events.publish(topics.guild(guild.id), 'GUILD_ROLE_DELETE', { guild_id: guild.id, role_id: managed.id })
  }
  dropGuildTopics([userId], guild.id, channelIds)
  events.publishToUser(userId, audiences.guilds, 'GUILD_DELETE', { id: guild.id })
  const user = await cachedUser(userId)
  events.publish(topics.guild(guild.id), 'GUILD_MEMBER_REMOVE', {
    guild_id: guild.id,
    user: user
      ? {
          id: user.id,
          username: user.username,
          global_name: user.globalName,
          discriminator: user.discriminator,
          avatar: user.avatar,
        }
      : { id: userId },
  })
}

export async function leaveGuild(userId: string, guildId: string): Promise<void> {
  const { guild } = await guildAccess(guildId, userId)
  if (guild.ownerId === userId) throw invalidGuild()
  await removeMember(guild, userId)
}

/** A deleted application's bot leaves every guild it is in, its managed role with it (as Discord's); how many. */
export async function removeFromEveryGuild(userId: string): Promise<number> {
  const guilds = await guildsOfUser(userId)
  for (const guild of guilds) if (guild.ownerId !== userId) await removeMember(guild, userId)
  return guilds.length
}

export async function kickMember(actorId: string, guildId: string, targetId: string): Promise<void> {
  const { guild } = await guildAccess(guildId, actorId, Permission.KICK_MEMBERS)
  if (!(await cachedGuildMember(guildId, targetId))) throw Errors.unknownMember()
  if (!(await outranks(guild, actorId, targetId))) throw Errors.missingPermissions()
  await removeMember(guild, targetId)
}

/** The caller's guilds in id order, paged by `before`/`after` and `limit` as Discord's. */
export async function myGuilds(userId: string, page: { limit: number; before?: string; after?: string }) {
  const id = (g: { id: string }) => BigInt(g.id)
  let list = (await guildsOfUser(userId)).sort((a, b) => (id(a) < id(b) ? -1 : 1))
  if (page.after !== undefined) list = list.filter((g) => id(g) > BigInt(page.after!))
  if (page.before !== undefined) {
    list = list.filter((g) => id(g) < BigInt(page.before!))
    if (page.after === undefined) list = list.slice(-page.limit)
  }
  const shown = list.slice(0, page.limit)
  const permissions: bigint[] = []
  for (const g of shown) permissions.push(await permissionsOf(g, userId))
  return shown.map((g, i) => ({
    id: g.id,
    name: g.name,
    icon: null,
    banner: null,
    owner: g.ownerId === userId,
    permissions: permissions[i].toString(),
    features: g.features,
  }))
}

/** Operator settings (CLI): features, hub type, vanity code. */
export async function setGuildAttributes(
  guildId: string,
  input: { features?: string[]; hubType?: number | null; vanity?: string | null },
) {
  const guild = await cachedGuild(guildId)
  if (!guild) throw Errors.unknownGuild()
  const changes = {
    ...(input.features !== undefined ? { features: input.features } : {}),
    ...(input.hubType !== undefined ? { hubType: input.hubType } : {}),
    ...(input.vanity !== undefined ? { vanityUrlCode: input.vanity } : {}),
  }
  if (Object.keys(changes).length > 0) await transaction(async (tx) => await updateGuild(tx, guildId, changes))
  return await serializeGuild((await cachedGuild(guildId))!)
}
