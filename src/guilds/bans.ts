// Bans (BAN_MEMBERS), as Discord's: a banned user leaves the guild, its messages of the last `delete_message_seconds`
// (at most 7 days) go with it, and it cannot join again (40007) until the ban is lifted. The owner cannot be banned,
// nor a member whose highest role is not below the banner's.
import { publicUser } from '../accounts/serialize'
import { cachedUser, findUsers } from '../accounts/store'
import { clock } from '../core/clock'
import { Permission } from '../core/discord'
import { Errors } from '../core/errors'
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { guildAccess, outranks } from './access'
import { unknownBan } from './errors'
import { announceLeave } from './lifecycle'
import { MAX_BAN_REASON } from './limits'
import type { BanInput } from './schemas'
import { cachedGuildMember, deleteMember, guildChannels } from './store'
import { authorMessagesSince, deleteMessageRows } from './messages-store'
import { deleteBan, findBan, guildBans, insertBan } from './bans-store'
import type { BanRow } from './tables'

/** X-Audit-Log-Reason as sent (URL-encoded by the libraries), decoded and cut to Discord's 512 characters. */
export function auditReason(header: string | null): string | null {
  if (!header) return null
  let text = header
  try {
    text = decodeURIComponent(header)
  } catch {}
  return text.slice(0, MAX_BAN_REASON)
}

export async function banUser(
  actorId: string,
  guildId: string,
  targetId: string,
  input: BanInput,
  reason: string | null,
): Promise<void> {
  const { guild } = await guildAccess(guildId, actorId, Permission.BAN_MEMBERS)
  const user = await cachedUser(targetId)
  if (!user) throw Errors.unknownUser()
  const member = await cachedGuildMember(guild.id, targetId)
  if (targetId === guild.ownerId || (member && !(await outranks(guild, actorId, targetId))))
    throw Errors.missingPermissions()
  const seconds = input.delete_message_seconds ?? (input.delete_message_days ?? 0) * 86_400
  const channelIds = (await guildChannels(guild.id)).map((c) => c.id)
  await transaction(async (tx) => {
    const added = await insertBan(tx, { guildId: guild.id, userId: targetId, reason, createdAt: clock.now() })
    if (member) await deleteMember(tx, guild.id, targetId)
    const recent = seconds ? await authorMessagesSince(tx, channelIds, targetId, clock.now() - seconds * 1000) : []
    for (const channelId of new Set(recent.map((m) => m.channelId))) {
      const ids = recent.filter((m) => m.channelId === channelId).map((m) => m.id)
      const deleted = await deleteMessageRows(tx, channelId, ids)
      events.publish(topics.channel(channelId), 'MESSAGE_DELETE_BULK', {
        ids: deleted,
        channel_id: channelId,
        guild_id: guild.id,
      })
    }
    if (member) await announceLeave(tx, guild, targetId, channelIds)
    if (added) events.publish(topics.guild(guild.id), 'GUILD_BAN_ADD', { guild_id: guild.id, user: publicUser(user) })
  })
}

export async function unbanUser(actorId: string, guildId: string, targetId: string): Promise<void> {
  const { guild } = await guildAccess(guildId, actorId, Permission.BAN_MEMBERS)
  await transaction(async (tx) => {
    if (!(await deleteBan(tx, guild.id, targetId))) throw unknownBan()
    const user = await cachedUser(targetId)
    events.publish(topics.guild(guild.id), 'GUILD_BAN_REMOVE', {
      guild_id: guild.id,
      user: user ? publicUser(user) : { id: targetId },
    })
  })
}

async function banObjects(rows: BanRow[]) {
  const users = await findUsers(rows.map((b) => b.userId))
  return rows.flatMap((b) => {
    const user = users.get(b.userId)
    return user ? [{ reason: b.reason, user: publicUser(user) }] : []
  })
}

export async function listBans(
  actorId: string,
  guildId: string,
  page: { limit: number; before?: string; after?: string },
) {
  const { guild } = await guildAccess(guildId, actorId, Permission.BAN_MEMBERS)
  return await banObjects(await guildBans(guild.id, page))
}

export async function getBan(actorId: string, guildId: string, targetId: string) {
  const { guild } = await guildAccess(guildId, actorId, Permission.BAN_MEMBERS)
  const ban = await findBan(guild.id, targetId)
  const [found] = ban ? await banObjects([ban]) : []
  if (!found) throw unknownBan()
  return found
}

/** Whether the user may not join the guild (invites answer 40007). */
export async function isBanned(guildId: string, userId: string): Promise<boolean> {
  return (await findBan(guildId, userId)) !== undefined
}
