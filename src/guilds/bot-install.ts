// An application's bot added to a guild by a member who may manage it: OAuth2's bot scope (oauth2/ asks the consent
// and reaches this through its install port). As Discord's: the member needs MANAGE_GUILD and must hold every
// permission it grants (the owner and administrators hold all); the bot joins with a managed role named after it that
// holds them (none when none are granted), its sessions get GUILD_CREATE and the members GUILD_MEMBER_ADD. A bot
// already there keeps its place and its role takes the permissions granted now. A banned bot is refused (40007).
import { cachedUser } from '../accounts/store'
import { clock } from '../core/clock'
import { ALL_PERMISSIONS, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { guildAccess, permissionsFrom } from './access'
import { isBanned } from './bans'
import { bannedFromGuild } from './errors'
import { syncMemberTopics } from './gateway'
import { announceJoin } from './lifecycle'
import { has } from './permissions'
import { insertRoleAtBottom } from './roles'
import { serializeGuild, serializeMember, serializeRole } from './serialize'
import {
  addMemberRole,
  cachedGuild,
  cachedGuildMember,
  cachedGuildRoles,
  insertMember,
  memberRoleIdsOfEach,
  membershipsOfUser,
  rolesOfEach,
  updateRoleRow,
} from './store'

/** Discord's role names are at most 100 characters. */
const ROLE_NAME_MAX = 100

/** The guilds where the user may add a bot (MANAGE_GUILD), in id order, with what the user may do there. */
export async function guildsToInstallIn(userId: string) {
  const memberships = await membershipsOfUser(userId)
  const ids = memberships.map((m) => m.guild.id)
  const roles = await rolesOfEach(ids)
  const mine = await memberRoleIdsOfEach(ids, userId)
  const out = []
  for (const { guild, member } of memberships) {
    const permissions = permissionsFrom(guild, member, roles.get(guild.id) ?? [], mine.get(guild.id) ?? [])
    if (!has(permissions, Permission.MANAGE_GUILD)) continue
    out.push({
      id: guild.id,
      name: guild.name,
      icon: null,
      owner: guild.ownerId === userId,
      permissions: permissions.toString(),
    })
  }
  return out
}

export type BotInstall = {
  guildId: string
  /** The member who consents. */
  userId: string
  botUserId: string
  /** The role's name: the application's. */
  botName: string
  /** What the bot's role may do. */
  permissions: bigint
}

/** Add the bot to the guild (see the head of the file); Discord's errors otherwise. */
export async function installBot(input: BotInstall): Promise<void> {
  const access = await guildAccess(input.guildId, input.userId, Permission.MANAGE_GUILD)
  // Nobody grants what they do not hold (the owner and ADMINISTRATOR hold everything: ALL_PERMISSIONS).
  if (access.permissions !== ALL_PERMISSIONS && (input.permissions & ~access.permissions) !== 0n)
    throw Errors.missingPermissions()
  if (await isBanned(input.guildId, input.botUserId)) throw bannedFromGuild()
  const guild = access.guild
  await transaction(async (tx) => {
    const member = await insertMember(tx, { guildId: guild.id, userId: input.botUserId, joinedAt: clock.now() })
    if (member) {
      if (input.permissions !== 0n) await giveManagedRole(tx, guild.id, input)
      await announceJoin(guild, member)
      return
    }
    // Already there: its role now holds what was granted (made now if it had none and something is granted).
    const managed = (await cachedGuildRoles(guild.id)).find((r) => r.botId === input.botUserId)
    const permissions = input.permissions.toString()
    if (managed && managed.permissions !== permissions) {
      const role = serializeRole(await updateRoleRow(tx, managed.id, { permissions }))
      events.publish(topics.guild(guild.id), 'GUILD_ROLE_UPDATE', { guild_id: guild.id, role })
    } else if (!managed && input.permissions !== 0n) {
      await giveManagedRole(tx, guild.id, input)
      const bot = await cachedGuildMember(guild.id, input.botUserId)
      if (bot)
        events.publish(topics.guild(guild.id), 'GUILD_MEMBER_UPDATE', {
          guild_id: guild.id,
          ...(await serializeMember(bot, await cachedUser(input.botUserId))),
        })
    } else return
    await syncMemberTopics(guild.id, input.botUserId)
  })
}

/** Inside the install's transaction: the bot's managed role, at the bottom, given to it. */
async function giveManagedRole(tx: DB, guildId: string, input: BotInstall): Promise<void> {
  const role = await insertRoleAtBottom(tx, {
    id: snowflake(),
    guildId,
    name: input.botName.slice(0, ROLE_NAME_MAX),
    permissions: input.permissions.toString(),
    botId: input.botUserId,
  })
  await addMemberRole(tx, guildId, input.botUserId, role.id)
}

/** The guild object a code's token answer names (Discord's `guild` of the extended bot authorization). */
export async function installedGuild(guildId: string) {
  const guild = await cachedGuild(guildId)
  return guild ? await serializeGuild(guild) : undefined
}
