// Gateway wiring for guilds: which topics a member follows (the guild, and each channel it can view),
// READY's guild list, and re-syncing subscriptions when membership, roles or channels change (inside the change's
// transaction: with several nodes they are outbox rows of it, like its events).
import { cachedUser } from '../accounts/store'
import type { Caller } from '../core/caller'
import { Permission } from '../core/discord'
import { reading } from '../db/client'
import { type Audience, audiences, events, sees, topics } from '../gateway/bus'
import { permissionsFrom } from './access'
import { has } from './permissions'
import {
  channelsOfEach,
  cachedGuild,
  cachedGuildMember,
  cachedGuildRoles,
  cachedMemberRoleIds,
  guildChannels,
  guildMembers,
  memberCountOfEach,
  memberRoleIdsOfEach,
  memberRoleIdsOfUsers,
  membershipsOfUser,
  rolesOfEach,
} from './store'
import { gatewayGuildObject } from './serialize'
import type { ChannelRow, GuildRow, MemberRow, RoleRow } from './tables'

/**
 * READY's guilds and the topics to follow: the user's guilds with their roles, channels and counts, one query each.
 * An OAuth2 session gets the guild objects only with `guilds`, and follows nothing said inside them. A bot gets them
 * as Discord gives them to bots: READY lists each as `{id, unavailable: true}` and its GUILD_CREATE follows (discord.js
 * and Discordeno fill their guild caches from those GUILD_CREATEs; discord.js waits for them before `ready`).
 */
export async function guildIdentify(caller: Caller) {
  if (!sees(caller, audiences.guilds)) return {}
  const { topics, ready } = await reading(async () => await readyGuilds(caller, sees(caller, audiences.guildActivity)))
  if (caller.kind !== 'bot') return { topics, ready }
  return {
    topics,
    ready: { guilds: ready.guilds.map((g) => ({ id: g.id, unavailable: true })) },
    after: ready.guilds.map((g): [string, unknown] => ['GUILD_CREATE', g]),
  }
}

async function readyGuilds(caller: Caller, followActivity: boolean) {
  const joined = await membershipsOfUser(caller.userId)
  const ids = joined.map((j) => j.guild.id)
  const roles = await rolesOfEach(ids)
  const mine = await memberRoleIdsOfEach(ids, caller.userId)
  const channels = await channelsOfEach(ids)
  const counts = await memberCountOfEach(ids)
  const me = joined.length ? await cachedUser(caller.userId) : undefined
  const topicList: string[] = []
  const ready = joined.map(({ guild, member }) => {
    const parts = {
      roles: roles.get(guild.id) ?? [],
      channels: channels.get(guild.id) ?? [],
      memberCount: counts.get(guild.id) ?? 0,
      memberRoleIds: mine.get(guild.id) ?? [],
    }
    const viewable = has(permissionsFrom(guild, member, parts.roles, parts.memberRoleIds), Permission.VIEW_CHANNEL)
    if (followActivity)
      topicList.push(topics.guild(guild.id), ...(viewable ? parts.channels.map((c) => topics.channel(c.id)) : []))
    return gatewayGuildObject(guild, member, me, parts)
  })
  return { topics: topicList, ready: { guilds: ready } }
}

/**
 * Make a member's live sessions follow exactly the guild's channels it can view. Called inside the write's transaction
 * (it reads the rows the write made): the calls go out with its events once it commits, in the same order.
 */
export async function syncMemberTopics(guildId: string, userId: string): Promise<void> {
  const guild = await cachedGuild(guildId)
  const member = guild && (await cachedGuildMember(guildId, userId))
  if (!guild || !member) return
  const roles = await cachedGuildRoles(guildId)
  const roleIds = await cachedMemberRoleIds(guildId, userId)
  follow(guild, [{ member, roleIds }], roles, await guildChannels(guildId))
}

/** Every member's sessions, as syncMemberTopics: the roles and channels read once, the members a page at a time. */
export async function syncAllMembers(guildId: string): Promise<void> {
  const guild = await cachedGuild(guildId)
  if (!guild) return
  const roles = await cachedGuildRoles(guildId)
  const channels = await guildChannels(guildId)
  for (let after = '0'; ; ) {
    const page = await guildMembers(guildId, MEMBERS_PAGE, after)
    if (!page.length) return
    after = page.at(-1)!.userId
    const roleIds = await memberRoleIdsOfUsers(
      guildId,
      page.map((m) => m.userId),
    )
    follow(
      guild,
      page.map((member) => ({ member, roleIds: roleIds.get(member.userId) ?? [] })),
      roles,
      channels,
    )
  }
}

/** Members read at a time, and named in one bus call at most. */
const MEMBERS_PAGE = 1000
/**
 * Topics named in one bus call at most (Discord's guilds hold up to 500 channels; nothing here stops more). A call
 * of 1000 user ids (~22 bytes each in JSON) and 500 topics (~30 bytes each) is an outbox row and a log entry of at most
 * ~40 KB; a guild of 100 000 members re-followed is 100 pages of at most 3 calls each (cluster/outbox.ts: they lock
 * the topics, not the members).
 */
const TOPICS_PER_CALL = 500

/**
 * The bus's calls that make these members' sessions follow the guild and the channels each can view, and no other:
 * one call per group of members that follow the same topics, not one per member and topic. Who may view a channel
 * is decided by the guild's permissions alone (no channel overwrites here), so a page makes at most three calls.
 */
function follow(
  guild: GuildRow,
  members: { member: MemberRow; roleIds: string[] }[],
  roles: RoleRow[],
  channels: ChannelRow[],
): void {
  const viewers: string[] = []
  const others: string[] = []
  for (const { member, roleIds } of members) {
    const viewable = has(permissionsFrom(guild, member, roles, roleIds), Permission.VIEW_CHANNEL)
    ;(viewable ? viewers : others).push(member.userId)
  }
  const guildTopic = topics.guild(guild.id)
  const channelTopics = channels.map((c) => topics.channel(c.id))
  inCalls(viewers, [guildTopic, ...channelTopics], audiences.guildActivity)
  inCalls(others, [guildTopic], audiences.guildActivity)
  inCalls(others, channelTopics)
}

/** After leaving, being kicked, or the guild's deletion: drop the guild's topics from these members' sessions. */
export function dropGuildTopics(userIds: string[], guildId: string, channelIds: string[]): void {
  inCalls(userIds, [topics.guild(guildId), ...channelIds.map(topics.channel)])
}

/** A channel deleted: no member's session follows it any more. */
export function dropChannelTopic(userIds: string[], channelId: string): void {
  inCalls(userIds, [topics.channel(channelId)])
}

/** Subscribe the users' sessions to the topics (unsubscribe without an audience), in calls of bounded size. */
function inCalls(userIds: string[], topicList: string[], audience?: Audience): void {
  for (let u = 0; u < userIds.length; u += MEMBERS_PAGE)
    for (let t = 0; t < topicList.length; t += TOPICS_PER_CALL) {
      const users = userIds.slice(u, u + MEMBERS_PAGE)
      const some = topicList.slice(t, t + TOPICS_PER_CALL)
      if (audience) events.subscribeUsers(users, some, audience)
      else events.unsubscribeUsers(users, some)
    }
}
