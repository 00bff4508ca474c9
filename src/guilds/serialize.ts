// Discord-shaped guild, role, channel, member, message and invite objects.
import { ChannelType } from '../core/discord'
import { publicUser } from '../accounts/serialize'
import type { UserRow } from '../accounts/tables'
import { cachedUser, findUsers } from '../accounts/store'
import {
  guildChannels,
  cachedGuildRoles,
  memberCount,
  cachedGuildMember,
  cachedMemberRoleIds,
  memberRoleIdsOfUsers,
} from './store'
import { messageInChannel, messagesInChannel } from './messages-store'
import { type ReactionCount } from './reactions-store'
import type { ChannelRow, GuildRow, InviteRow, MemberRow, MessageRow, RoleRow } from './tables'

export function serializeRole(r: RoleRow) {
  return {
    id: r.id,
    name: r.name,
    color: r.color,
    // Discord's role colours (2025): one colour here, no gradient. Oceanic reads colors.primary_color of every role.
    colors: { primary_color: r.color, secondary_color: null, tertiary_color: null },
    hoist: r.hoist,
    icon: null,
    unicode_emoji: null,
    position: r.position,
    permissions: r.permissions,
    managed: r.botId !== null,
    mentionable: r.mentionable,
    flags: 0,
    ...(r.botId !== null ? { tags: { bot_id: r.botId } } : {}),
  }
}

export function serializeChannelRow(c: ChannelRow) {
  return {
    id: c.id,
    type: c.type,
    guild_id: c.guildId,
    name: c.name,
    position: c.position,
    permission_overwrites: [],
    parent_id: null,
    nsfw: c.nsfw,
    ...(c.type === ChannelType.GUILD_TEXT
      ? { topic: c.topic, last_message_id: c.lastMessageId, rate_limit_per_user: 0 }
      : { bitrate: 64000, user_limit: 0, rtc_region: null }),
    flags: 0,
  }
}

/** What a guild object shows besides its row; READY reads these for all the user's guilds at once. */
export type GuildParts = { memberCount: number; roles: RoleRow[]; channels: ChannelRow[]; memberRoleIds: string[] }

/** The guild object from its row and what it shows besides (READY has those of all the user's guilds at once). */
export function guildObject(g: GuildRow, parts: Pick<GuildParts, 'memberCount' | 'roles'>) {
  return {
    id: g.id,
    name: g.name,
    icon: null,
    description: null,
    owner_id: g.ownerId,
    features: g.features,
    vanity_url_code: g.vanityUrlCode,
    hub_type: g.hubType,
    member_count: parts.memberCount,
    roles: parts.roles.map(serializeRole),
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    premium_tier: 0,
    nsfw_level: 0,
    preferred_locale: 'en-US',
    // The rest of Discord's guild object, which strict libraries require: what the model has none of.
    splash: null,
    discovery_splash: null,
    banner: null,
    afk_channel_id: null,
    afk_timeout: 300,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    public_updates_channel_id: null,
    safety_alerts_channel_id: null,
    premium_subscription_count: 0,
    premium_progress_bar_enabled: false,
    emojis: [],
    stickers: [],
  }
}

export async function serializeGuild(g: GuildRow) {
  return guildObject(g, { memberCount: await memberCount(g.id), roles: await cachedGuildRoles(g.id) })
}

/**
 * GUILD_CREATE and READY carry the channels, and the receiving member: its joined_at, and itself in `members` (as
 * Discord's do; discord.py's `guild.me` and discord.js's `guild.members.me` come from there).
 */
export function gatewayGuildObject(
  g: GuildRow,
  member: MemberRow | undefined,
  memberUser: UserRow | undefined,
  parts: GuildParts,
) {
  return {
    ...guildObject(g, parts),
    channels: parts.channels.map(serializeChannelRow),
    members: member ? [memberObject(member, memberUser, parts.memberRoleIds)] : [],
    joined_at: member ? new Date(member.joinedAt).toISOString() : null,
    large: false,
    unavailable: false,
    voice_states: [],
    presences: [],
    threads: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  }
}

/** GUILD_CREATE for one guild: what it shows read. */
export async function serializeGuildForGateway(g: GuildRow, member?: MemberRow) {
  const parts: GuildParts = {
    memberCount: await memberCount(g.id),
    roles: await cachedGuildRoles(g.id),
    channels: await guildChannels(g.id),
    memberRoleIds: member ? await cachedMemberRoleIds(g.id, member.userId) : [],
  }
  return gatewayGuildObject(g, member, member && (await cachedUser(member.userId)), parts)
}

export function memberObject(m: MemberRow, user: UserRow | undefined, roleIds: string[]) {
  return { user: user ? publicUser(user) : null, ...memberFieldsWith(m, roleIds) }
}

/** A member, its role ids read. */
export async function serializeMember(m: MemberRow, user: UserRow | undefined) {
  return memberObject(m, user, await cachedMemberRoleIds(m.guildId, m.userId))
}

/** A member without its user: MESSAGE_CREATE carries its author's so (discord.py makes `message.author` a Member). */
export async function memberFields(m: MemberRow) {
  return memberFieldsWith(m, await cachedMemberRoleIds(m.guildId, m.userId))
}

function memberFieldsWith(m: MemberRow, roleIds: string[]) {
  return {
    nick: m.nick,
    avatar: null,
    roles: roleIds,
    joined_at: new Date(m.joinedAt).toISOString(),
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0,
    pending: false,
    communication_disabled_until:
      m.communicationDisabledUntil === null ? null : new Date(m.communicationDisabledUntil).toISOString(),
  }
}

/** Members of one guild, with their users and role ids read in one query each. */
export async function serializeMembers(guildId: string, rows: MemberRow[]) {
  const ids = rows.map((m) => m.userId)
  const users = await findUsers(ids)
  const roles = await memberRoleIdsOfUsers(guildId, ids)
  return rows.map((m) => memberObject(m, users.get(m.userId), roles.get(m.userId) ?? []))
}

/**
 * A message as Gateway events carry it: with its author's member (without its user) and each mentioned user's
 * `member`, while they are in the guild, as Discord's (discord.py makes `message.author` a Member from it, discord.js
 * fills `message.mentions.members`).
 */
export async function messageForEvent(body: Awaited<ReturnType<typeof serializeMessage>>, guildId: string | null) {
  if (guildId === null) return body // a DM: no members
  const mentions = []
  for (const user of body.mentions) {
    const member = await cachedGuildMember(guildId, user.id)
    mentions.push(member ? { ...user, member: await memberFields(member) } : user)
  }
  const author = body.author && (await cachedGuildMember(guildId, body.author.id))
  return { ...body, mentions, ...(author ? { member: await memberFields(author) } : {}) }
}

/** The authors and the users mentioned of these messages: one query, or the cached author alone. */
async function usersOf(rows: MessageRow[]): Promise<Map<string, UserRow>> {
  const ids = new Set(rows.flatMap((m) => [m.authorId, ...m.mentions.users]))
  if (ids.size !== 1) return await findUsers(ids)
  const [id] = ids
  const user = await cachedUser(id!)
  return new Map(user ? [[id!, user]] : [])
}

/**
 * A page of messages, with their authors, the users they mention and the messages they reply to read in one query
 * each, and their reactions as the reader sees them.
 */
export async function serializeMessages(
  rows: MessageRow[],
  guildId: string | null,
  reactions: Map<string, ReactionCount[]> = new Map(),
) {
  const referenceIds = rows.flatMap((m) => (m.referenceId === null ? [] : [m.referenceId]))
  const referenced = referenceIds.length ? await messagesInChannel(rows[0]!.channelId, referenceIds) : []
  const users = await usersOf([...rows, ...referenced])
  const replied = new Map(referenced.map((r) => [r.id, messageObject(r, guildId, users)]))
  return rows.map((m) =>
    messageObject(m, guildId, users, reactions.get(m.id), replied.get(m.referenceId ?? '') ?? null),
  )
}

/** A message, its users (and the message it replies to) read; `reactions` as its reader sees them. */
export async function serializeMessage(m: MessageRow, guildId: string | null, reactions?: ReactionCount[]) {
  const referenced = m.referenceId === null ? undefined : await messageInChannel(m.channelId, m.referenceId)
  const users = await usersOf(referenced ? [m, referenced] : [m])
  const replied = referenced && messageObject(referenced, guildId, users)
  return messageObject(m, guildId, users, reactions, replied ?? null)
}

/** A reaction on a message: unicode emoji only, no super reactions. */
export function reactionObject(r: ReactionCount) {
  return {
    emoji: { id: null, name: r.emoji },
    count: r.count,
    count_details: { burst: 0, normal: r.count },
    burst_colors: [],
    me_burst: false,
    me: r.me,
  }
}

/** A message; `reactions` as its reader sees them (`me`), left out when there are none, as Discord does. */
/**
 * A message object. A reply (type 19) names the message it replies to (`message_reference`) and carries it as
 * `referenced_message` (null once deleted), itself without a `referenced_message` of its own, as Discord's.
 */
export function messageObject(
  m: MessageRow,
  guildId: string | null,
  users: Map<string, UserRow>,
  reactions?: ReactionCount[],
  referenced?: Record<string, unknown> | null,
) {
  // A DM's messages (no guild) have no guild_id, as Discord's.
  const guild = guildId === null ? {} : { guild_id: guildId }
  const reply =
    m.referenceId === null
      ? {}
      : {
          message_reference: { type: 0, message_id: m.referenceId, channel_id: m.channelId, ...guild },
          ...(referenced !== undefined ? { referenced_message: referenced } : {}),
        }
  return {
    id: m.id,
    type: m.referenceId === null ? 0 : 19,
    content: m.content,
    channel_id: m.channelId,
    ...guild,
    author: users.has(m.authorId) ? publicUser(users.get(m.authorId)!) : null,
    attachments: [],
    embeds: m.embeds,
    mentions: m.mentions.users.flatMap((id) => (users.has(id) ? [publicUser(users.get(id)!)] : [])),
    mention_roles: m.mentions.roles,
    mention_everyone: m.mentions.everyone,
    pinned: m.pinnedAt !== null,
    tts: false,
    timestamp: new Date(m.createdAt).toISOString(),
    edited_timestamp: m.editedAt === null ? null : new Date(m.editedAt).toISOString(),
    flags: 0,
    components: [],
    ...(reactions?.length ? { reactions: reactions.map(reactionObject) } : {}),
    ...(m.nonce !== null ? { nonce: m.nonce } : {}),
    ...reply,
  }
}

export async function serializeInvite(i: InviteRow, guild: GuildRow, channel: ChannelRow) {
  const inviter = i.inviterId ? await cachedUser(i.inviterId) : undefined
  const target = i.targetUserId ? await cachedUser(i.targetUserId) : undefined
  return {
    code: i.code,
    type: 0,
    guild: {
      id: guild.id,
      name: guild.name,
      icon: null,
      features: guild.features,
      vanity_url_code: guild.vanityUrlCode,
    },
    guild_id: guild.id,
    channel: { id: channel.id, name: channel.name, type: channel.type },
    inviter: inviter ? publicUser(inviter) : undefined,
    ...(target ? { target_type: 1, target_user: publicUser(target) } : {}),
    uses: i.uses,
    max_uses: i.maxUses,
    max_age: i.maxAge,
    temporary: i.temporary,
    created_at: new Date(i.createdAt).toISOString(),
    expires_at: i.expiresAt === null ? null : new Date(i.expiresAt).toISOString(),
    approximate_member_count: await memberCount(guild.id),
  }
}
