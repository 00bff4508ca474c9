// Roles: create (at the bottom), edit, move, delete (MANAGE_ROLES); give and take (MANAGE_ROLES). A non-owner can only
// act on roles below its own highest role and cannot grant permissions it does not have. A bot's managed role (made
// when it was added: bot-install.ts) is edited and moved like any other, but never deleted, given or taken by hand.
import { ALL_PERMISSIONS, Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { type DB, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { cachedUser } from '../accounts/store'
import { guildAccess, topPosition, type GuildAccess } from './access'
import { everyoneUndeletable, invalidPermissions, managedRole } from './errors'
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
import type { RoleInput, RolePositionsInput } from './schemas'
import { serializeMember, serializeRole } from './serialize'
import type { RoleRow, roles } from './tables'

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

/** The guild's roles but @everyone, lowest first: the order that positions 1, 2, ... number. */
function ladder(guildId: string, all: RoleRow[]): RoleRow[] {
  return all.filter((r) => r.id !== guildId)
}

/** Number `order` 1, 2, ... (writing only the roles whose position changes): the rows changed. */
async function renumber(tx: DB, order: RoleRow[]): Promise<RoleRow[]> {
  const changed: RoleRow[] = []
  for (const [i, role] of order.entries())
    if (role.position !== i + 1) changed.push(await updateRoleRow(tx, role.id, { position: i + 1 }))
  return changed
}

function announceMoves(guildId: string, moved: RoleRow[]): void {
  for (const role of moved)
    events.publish(topics.guild(guildId), 'GUILD_ROLE_UPDATE', { guild_id: guildId, role: serializeRole(role) })
}

/** A new role goes to the bottom (position 1, just above @everyone), as Discord's: the others move up one. */
export async function createRole(userId: string, guildId: string, input: RoleInput) {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const permissions = grantable(access, input.permissions) ?? '0'
  const row = await transaction(
    async (tx) =>
      await insertRoleAtBottom(tx, {
        id: snowflake(),
        guildId,
        name: input.name ?? 'new role',
        permissions,
        color: input.color ?? 0,
        hoist: input.hoist ?? false,
        mentionable: input.mentionable ?? false,
      }),
  )
  return serializeRole(row)
}

/** In a transaction: a new role at position 1 (the others move up one), GUILD_ROLE_CREATE and the moves given. */
export async function insertRoleAtBottom(tx: DB, role: Omit<typeof roles.$inferInsert, 'position'>): Promise<RoleRow> {
  const above = ladder(role.guildId, await cachedGuildRoles(role.guildId))
  const row = await insertRole(tx, { ...role, position: 1 })
  events.publish(topics.guild(role.guildId), 'GUILD_ROLE_CREATE', { guild_id: role.guildId, role: serializeRole(row) })
  announceMoves(role.guildId, await renumber(tx, [row, ...above]))
  return row
}

/**
 * Modify Guild Role Positions: each role named goes to its position (1 is the lowest; @everyone stays at 0), the
 * others keep their order around them. A non-owner moves only roles below its highest, and only below it; every
 * role whose position changes gets GUILD_ROLE_UPDATE. Answers the guild's roles.
 */
export async function moveRoles(userId: string, guildId: string, moves: RolePositionsInput) {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const all = await cachedGuildRoles(guildId)
  const byId = new Map(all.map((r) => [r.id, r]))
  if (moves.some((m) => !byId.has(m.id))) throw Errors.unknownRole()
  const targets = new Map<string, number>()
  for (const m of moves)
    if (m.id !== guildId && m.position !== undefined && m.position !== null) targets.set(m.id, m.position)
  const order = ladder(guildId, all).filter((r) => !targets.has(r.id))
  for (const [id, position] of [...targets].sort((a, b) => a[1] - b[1]))
    order.splice(Math.min(Math.max(position - 1, 0), order.length), 0, byId.get(id)!)
  const top = await topPosition(access.guild, userId)
  if (order.some((r, i) => r.position !== i + 1 && (r.position >= top || i + 1 >= top)))
    throw Errors.missingPermissions()
  await transaction(async (tx) => announceMoves(guildId, await renumber(tx, order)))
  return (await cachedGuildRoles(guildId)).map(serializeRole)
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
  return await transaction(async (tx) => {
    const body = serializeRole(await updateRoleRow(tx, roleId, changes))
    events.publish(topics.guild(guildId), 'GUILD_ROLE_UPDATE', { guild_id: guildId, role: body })
    if (permissions !== undefined) await syncAllMembers(guildId)
    return body
  })
}

export async function deleteRole(userId: string, guildId: string, roleId: string): Promise<void> {
  const access = await guildAccess(guildId, userId, Permission.MANAGE_ROLES)
  const role = await getRole(guildId, roleId)
  if (!role) throw Errors.unknownRole()
  if (role.id === guildId) throw everyoneUndeletable()
  // A bot's role goes with the bot (kick or ban it), as Discord's managed roles.
  if (role.botId !== null) throw managedRole()
  await manageable(access, role)
  await transaction(async (tx) => {
    await deleteRoleRow(tx, roleId)
    events.publish(topics.guild(guildId), 'GUILD_ROLE_DELETE', { guild_id: guildId, role_id: roleId })
    await syncAllMembers(guildId)
  })
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
  if (role.botId !== null) throw managedRole()
  await manageable(access, role)
  await transaction(async (tx) => {
    if (give) await addMemberRole(tx, guildId, targetId, roleId)
    else await removeMemberRole(tx, guildId, targetId, roleId)
    await syncMemberTopics(guildId, targetId)
    events.publish(topics.guild(guildId), 'GUILD_MEMBER_UPDATE', {
      guild_id: guildId,
      ...(await serializeMember(member, await cachedUser(targetId))),
    })
  })
}

export async function listRoles(userId: string, guildId: string) {
  await guildAccess(guildId, userId)
  return (await cachedGuildRoles(guildId)).map(serializeRole)
}
