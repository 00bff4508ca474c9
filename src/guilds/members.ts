// Members of a guild: one read (10007 when the user is not a member), searched by name, and edited (nickname, role
// list, timeout) as Discord's Modify Guild Member and Modify Current Member.
import { cachedUser } from '../accounts/store'
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { reading, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { guildAccess, outranks, permissionsOf, topPosition } from './access'
import { parsedTime } from './embed-fields'
import { invalidTimeout } from './errors'
import { MAX_TIMEOUT_DAYS } from './limits'
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
  updateMemberRow,
} from './store'
import type { MemberRow } from './tables'

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
 * Change a member's nickname, role list and timeout. Another member's nickname takes MANAGE_NICKNAMES and a higher
 * role than theirs (never the owner's); one's own, CHANGE_NICKNAME or MANAGE_NICKNAMES. Roles take MANAGE_ROLES, and
 * each role added or removed must sit below the caller's highest (the @everyone id in the list is passed over, as
 * Discord). A timeout takes MODERATE_MEMBERS and a higher role, never on an administrator; while it lasts the member
 * only reads (access.ts). An edit that changes something sends GUILD_MEMBER_UPDATE; the member is answered either way.
 */
export async function editMember(actorId: string, guildId: string, targetId: string, input: MemberEditInput) {
  const access = await guildAccess(guildId, actorId)
  const { guild } = access
  const member = await cachedGuildMember(guild.id, targetId)
  if (!member) throw Errors.unknownMember()
  const patch: Partial<Pick<MemberRow, 'nick' | 'communicationDisabledUntil'>> = {}
  const nick = input.nick === undefined ? member.nick : input.nick || null
  if (nick !== member.nick) {
    const own = targetId === actorId && has(access.permissions, Permission.CHANGE_NICKNAME)
    if (!own && !has(access.permissions, Permission.MANAGE_NICKNAMES)) throw Errors.missingPermissions()
    if (targetId !== actorId && !(await outranks(guild, actorId, targetId))) throw Errors.missingPermissions()
    patch.nick = nick
  }
  const until = timeoutEnd(input.communication_disabled_until, member.communicationDisabledUntil)
  if (until !== member.communicationDisabledUntil) {
    if (!has(access.permissions, Permission.MODERATE_MEMBERS)) throw Errors.missingPermissions()
    const targetIsAdmin = has(await permissionsOf(guild, targetId), Permission.ADMINISTRATOR)
    if (targetIsAdmin || !(await outranks(guild, actorId, targetId))) throw Errors.missingPermissions()
    patch.communicationDisabledUntil = until
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
  if (!Object.keys(patch).length && !added.length && !removed.length)
    return await serializeMember(member, await cachedUser(targetId))
  return await transaction(async (tx) => {
    for (const id of added) await addMemberRole(tx, guild.id, targetId, id)
    for (const id of removed) await removeMemberRole(tx, guild.id, targetId, id)
    const row = Object.keys(patch).length ? await updateMemberRow(tx, guild.id, targetId, patch) : member
    if (!row) throw Errors.unknownMember()
    if (added.length || removed.length) await syncMemberTopics(guild.id, targetId)
    const body = await serializeMember(row, await cachedUser(targetId))
    events.publish(topics.guild(guild.id), 'GUILD_MEMBER_UPDATE', { guild_id: guild.id, ...body })
    return body
  })
}

/**
 * The timeout's end (ms) an edit asks for: absent, the current one; null, none; an ISO 8601 time at most
 * MAX_TIMEOUT_DAYS ahead (a past one ends it), else 50035 INVALID_COMMUNICATION_DISABLED_TIMESTAMP.
 */
function timeoutEnd(value: string | null | undefined, current: number | null): number | null {
  if (value === undefined) return current
  if (value === null) return null
  const at = parsedTime(value)
  if (Number.isNaN(at) || at > clock.now() + MAX_TIMEOUT_DAYS * 86_400_000) throw invalidTimeout()
  return at
}
