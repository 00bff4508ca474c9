// Guild lifecycle and membership: create, rename, delete, join, leave, kick.
import { clock } from '../core/clock'
import { ChannelType, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { audiences, events, topics } from '../gateway/bus'
import { findUser } from '../accounts/store'
import { guildAccess, permissionsOf, topPosition } from './access'
import { invalidGuild } from './errors'
import { dropGuildTopics, syncMemberTopics } from './gateway'
import { DEFAULT_EVERYONE } from './permissions'
import {
  deleteGuildRow,
  deleteMember,
  getGuild,
  getMember,
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
import type { GuildRow } from './tables'

export function createGuild(ownerId: string, name: string) {
  const id = snowflake()
  const now = clock.now()
  transaction((tx) => {
    insertGuild(tx, { id, name, ownerId, createdAt: now })
    insertRole(tx, { id, guildId: id, name: '@everyone', permissions: DEFAULT_EVERYONE.toString(), position: 0 })
    insertMember(tx, { guildId: id, userId: ownerId, joinedAt: now })
    insertChannel(tx, {
      id: snowflake(),
      guildId: id,
      type: ChannelType.GUILD_TEXT,
      name: 'general',
      position: 0,
      createdAt: now,
    })
    insertChannel(tx, {
      id: snowflake(),
      guildId: id,
      type: ChannelType.GUILD_VOICE,
      name: 'General',
      position: 1,
      createdAt: now,
    })
  })
  const guild = getGuild(id)!
  syncMemberTopics(id, ownerId)
  events.publishToUser(
    ownerId,
    audiences.guilds,
    'GUILD_CREATE',
    serializeGuildForGateway(guild, getMember(id, ownerId)),
  )
  return serializeGuild(guild)
}

export function renameGuild(userId: string, guildId: string, name: string | undefined) {
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId !== userId) throw Errors.missingPermissions()
  if (name !== undefined) transaction((tx) => updateGuild(tx, guildId, { name }))
  const body = serializeGuild(getGuild(guildId)!)
  events.publish(topics.guild(guildId), 'GUILD_UPDATE', body)
  return body
}

export function deleteGuild(userId: string, guildId: string): void {
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId !== userId) throw Errors.missingPermissions()
  const channelIds = guildChannels(guildId).map((c) => c.id)
  const memberIds = transaction((tx) => {
    const ids = memberUserIds(guildId, tx)
    deleteGuildRow(tx, guildId)
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
      const row = insertMember(tx, { guildId: guild.id, userId, joinedAt: clock.now() })
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
  const user = findUser(userId)
  events.publish(topics.guild(guild.id), 'GUILD_MEMBER_ADD', { guild_id: guild.id, ...serializeMember(member, user) })
  syncMemberTopics(guild.id, userId)
  events.publishToUser(userId, audiences.guilds, 'GUILD_CREATE', serializeGuildForGateway(guild, member))
}

function removeMember(guild: GuildRow, userId: string): void {
  const channelIds = guildChannels(guild.id).map((c) => c.id)
  transaction((tx) => deleteMember(tx, guild.id, userId))
  dropGuildTopics(userId, guild.id, channelIds)
  events.publishToUser(userId, audiences.guilds, 'GUILD_DELETE', { id: guild.id })
  const user = findUser(userId)
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
  const { guild } = guildAccess(guildId, userId)
  if (guild.ownerId === userId) throw invalidGuild()
  removeMember(guild, userId)
}

export async function kickMember(actorId: string, guildId: string, targetId: string): Promise<void> {
  const { guild } = guildAccess(guildId, actorId, Permission.KICK_MEMBERS)
  if (!getMember(guildId, targetId)) throw Errors.unknownMember()
  if (
    targetId === guild.ownerId ||
    (actorId !== guild.ownerId && topPosition(guild, targetId) >= topPosition(guild, actorId))
  ) {
    throw Errors.missingPermissions()
  }
  removeMember(guild, targetId)
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

/** Operator settings (CLI): features, hub type, vanity code. */
export function setGuildAttributes(
  guildId: string,
  input: { features?: string[]; hubType?: number | null; vanity?: string | null },
) {
  const guild = getGuild(guildId)
  if (!guild) throw Errors.unknownGuild()
  const changes = {
    ...(input.features !== undefined ? { features: input.features } : {}),
    ...(input.hubType !== undefined ? { hubType: input.hubType } : {}),
    ...(input.vanity !== undefined ? { vanityUrlCode: input.vanity } : {}),
  }
  if (Object.keys(changes).length > 0) transaction((tx) => updateGuild(tx, guildId, changes))
  return serializeGuild(getGuild(guildId)!)
}
