// Roles: create, edit, delete (MANAGE_ROLES); give and take (MANAGE_ROLES). A non-owner can only act on roles
// below its own highest role and cannot grant permissions it does not have.
import { ALL_PERMISSIONS, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { cachedUser } from '../accounts/store'
import { guildAccess, topPosition, type GuildAccess } from './access'
import { everyoneUndeletable, invalidPermissions } from './errors'
import { syncAllMembers, syncMemberTopics } from './gateway'
import { parsePermissions } from './permissions'
import {
  addMemberRole,
  deleteRoleRow,
  cachedGuildMember,
  getRole,
  cachedGuildRoles,
  insertRole,
  removeMemberRole,
  updateRoleRow,
} from './store'
import type { RoleInput } from './schemas'
import { serializeMember, serializeRole } from './serialize'
import type { RoleRow } from './tables'

function grantable(access: GuildAccess, permissions: string | undefined): string | undefined {
  if (permissions === undefined) return undefined
  const bits = parsePermissions(permissions)
  if (bits === null) throw invalidPermissions()
  const isOwner = access.guild.ownerId === access.member.userId
  if (!isOwner && access.permissions !== ALL_PERMISSIONS && (bits & ~access.permissions) !== 0n)
    throw Errors.missingPermissions()
  return bits.toString()
}

async function manageable(access: GuildAccess, role: RoleRow): Promise<void> {
  if (
    access.guild.ownerId !== access.member.userId &&
    role.position >= (await topPosition(access.guild, access.member.userId))
  ) {
    throw Errors.missingPermissions()
  }
}

export async function createRole(userId: string, guildId: string, input: RoleInput) {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const permissions = grantable(access, input.permissions) ?? '0'
  const position = (await cachedGuildRoles(guildId)).length
  const row = await transaction(
    async (tx) =>
      await insertRole(tx, {
        id: snowflake(),
        guildId,
        name: input.name ?? 'new role',
        permissions,
        position,
        color: input.color ?? 0,
        hoist: input.hoist ?? false,
        mentionable: input.mentionable ?? false,
      }),
  )
  const body = serializeRole(row)
  events.publish(topics.guild(guildId), 'GUILD_ROLE_CREATE', { guild_id: guildId, role: body })
  return body
}

export async function updateRole(userId: string, guildId: string, roleId: string, input: RoleInput) {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const role = await getRole(guildId, roleId)
  if (!role) throw Errors.unknownRole()
  if (role.id !== guildId) await manageable(access, role)
  const permissions = grantable(access, input.permissions)
  const changes = {
    ...(input.name !== undefined && role.id !== guildId ? { name: input.name } : {}),
    ...(permissions !== undefined ? { permissions } : {}),
    ...(input.color !== undefined ? { color: input.color } : {}),
    ...(input.hoist !== undefined ? { hoist: input.hoist } : {}),
    ...(input.mentionable !== undefined ? { mentionable: input.mentionable } : {}),
  }
  if (Object.keys(changes).length === 0) return serializeRole(role)
  const row = await transaction(async (tx) => await updateRoleRow(tx, roleId, changes))
  const body = serializeRole(row)
  events.publish(topics.guild(guildId), 'GUILD_ROLE_UPDATE', { guild_id: guildId, role: body })
  if (permissions !== undefined) await syncAllMembers(guildId)
  return body
}

export async function deleteRole(userId: string, guildId: string, roleId: string): Promise<void> {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const role = await getRole(guildId, roleId)
  if (!role) throw Errors.unknownRole()
  if (role.id === guildId) throw everyoneUndeletable()
  await manageable(access, role)
  await transaction(async (tx) => await deleteRoleRow(tx, roleId))
  events.publish(topics.guild(guildId), 'GUILD_ROLE_DELETE', { guild_id: guildId, role_id: roleId })
  await syncAllMembers(guildId)
}

export async function setMemberRole(
  userId: string,
  guildId: string,
  targetId: string,
  roleId: string,
  give: boolean,
): Promise<void> {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const member = await cachedGuildMember(guildId, targetId)
  if (!member) throw Errors.unknownMember()
  const role = await getRole(guildId, roleId)
  if (!role || role.id === guildId) throw Errors.unknownRole()
  await manageable(access, role)
  await transaction(async (tx) => {
    if (give) await addMemberRole(tx, guildId, targetId, roleId)
    else await removeMemberRole(tx, guildId, targetId, roleId)
  })
  await syncMemberTopics(guildId, targetId)
  events.publish(topics.guild(guildId), 'GUILD_MEMBER_UPDATE', {
    guild_id: guildId,
    ...(await serializeMember(member, await cachedUser(targetId))),
  })
}

export async function listRoles(userId: string, guildId: string) {
  await guildAccess(guildId, userId)
  return (await cachedGuildRoles(guildId)).map(serializeRole)
}
