// Members of a guild: one read (10007 when the user is not a member), searched by name, and edited (nickname, role
// list) as Discord's Modify Guild Member and Modify Current Member.
import { cachedUser } from '../accounts/store'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { guildAccess, outranks, topPosition } from './access'
import { syncMemberTopics } from './gateway'
import { has } from './permissions'
import type { MemberEditInput } from './schemas'
import { serializeMember, serializeMembers } from './serialize'
import {
  addMemberRole,
  cachedGuildMember,
  cachedGuildRoles,
  cachedMemberRoleIds,
  guildMembers,
  removeMemberRole,
  updateMemberNick,
} from './store'

export async function guildMember(callerId: string, guildId: string, userId: string) {
  return await reading(async () => {
    const { guild } = await guildAccess(guildId, callerId)
    const member = await cachedGuildMember(guild.id, userId)
    if (!member) throw Errors.unknownMember()
    return serializeMember(member, await cachedUser(member.userId))
  })
}

/**
 * The members whose username or nickname starts with `prefix` (any case), in user id order, at most `limit`: GET
 * /guilds/{id}/members/search and Gateway op 8. Read a page of members at a time.
 */
export async function membersNamed(guildId: string, prefix: string, limit: number) {
  const wanted = prefix.toLowerCase()
  const found: Awaited<ReturnType<typeof serializeMembers>> = []
  for (let after = '0'; found.length < limit; ) {
    const rows = await guildMembers(guildId, MEMBERS_PAGE, after)
    if (!rows.length) break
    after = rows.at(-1)!.userId
    for (const member of await serializeMembers(guildId, rows)) {
      const names = [member.user?.username, member.nick].map((n) => n?.toLowerCase())
      if (names.some((n) => n?.startsWith(wanted))) found.push(member)
      if (found.length >= limit) break
    }
  }
  return found
}

/** GET /guilds/{id}/members/search: members only. */
export async function searchMembers(callerId: string, guildId: string, prefix: string, limit: number) {
  const { guild } = await guildAccess(guildId, callerId)
  return await membersNamed(guild.id, prefix, limit)
}

const MEMBERS_PAGE = 1000

/**
 * Change a member's nickname and role list. Another member's nickname takes MANAGE_NICKNAMES and a higher role than
 * theirs (never the owner's); one's own, CHANGE_NICKNAME or MANAGE_NICKNAMES. Roles take MANAGE_ROLES, and each role
 * added or removed must sit below the caller's highest (the @everyone id in the list is passed over, as Discord).
 * An edit that changes something sends GUILD_MEMBER_UPDATE; the member is answered either way.
 */
export async function editMember(actorId: string, guildId: string, targetId: string, input: MemberEditInput) {
  const access = await guildAccess(guildId, actorId)
  const { guild } = access
  const member = await cachedGuildMember(guild.id, targetId)
  if (!member) throw Errors.unknownMember()
  const nick = input.nick === undefined ? member.nick : input.nick || null
  const nickChanged = nick !== member.nick
  if (nickChanged) {
    const own = targetId === actorId && has(access.permissions, Permission.CHANGE_NICKNAME)
    if (!own && !has(access.permissions, Permission.MANAGE_NICKNAMES)) throw Errors.missingPermissions()
    if (targetId !== actorId && !(await outranks(guild, actorId, targetId))) throw Errors.missingPermissions()
  }
  const current = await cachedMemberRoleIds(guild.id, targetId)
  const wanted = input.roles === undefined ? current : [...new Set(input.roles)].filter((id) => id !== guild.id)
  const added = wanted.filter((id) => !current.includes(id))
  const removed = current.filter((id) => !wanted.includes(id))
  if (added.length || removed.length) {
    if (!has(access.permissions, Permission.MANAGE_ROLES)) throw Errors.missingPermissions()
    const roles = new Map((await cachedGuildRoles(guild.id)).map((r) => [r.id, r]))
    if (added.some((id) => !roles.has(id))) throw Errors.unknownRole()
    const top = await topPosition(guild, actorId)
    if ([...added, ...removed].some((id) => (roles.get(id)?.position ?? 0) >= top)) throw Errors.missingPermissions()
  }
  if (!nickChanged && !added.length && !removed.length) return await serializeMember(member, await cachedUser(targetId))
  const row = await transaction(async (tx) => {
    for (const id of added) await addMemberRole(tx, guild.id, targetId, id)
    for (const id of removed) await removeMemberRole(tx, guild.id, targetId, id)
    return nickChanged ? await updateMemberNick(tx, guild.id, targetId, nick) : member
  })
  if (!row) throw Errors.unknownMember()
  if (added.length || removed.length) await syncMemberTopics(guild.id, targetId)
  const body = await serializeMember(row, await cachedUser(targetId))
  events.publish(topics.guild(guild.id), 'GUILD_MEMBER_UPDATE', { guild_id: guild.id, ...body })
  return body
}
