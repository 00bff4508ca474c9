// Discord-shaped guild, role, channel, member, message and invite objects.
import { ChannelType } from '../core/discord'
import { publicUser } from '../accounts/serialize'
import type { UserRow } from '../accounts/tables'
import { findUser, findUsers } from '../accounts/store'
import { guildChannels, guildRoles, memberCount, memberRoleIds, memberRoleIdsOfUsers } from './store'
import type { ChannelRow, GuildRow, InviteRow, MemberRow, MessageRow, RoleRow } from './tables'

export function serializeRole(r: RoleRow) {
  return {
    id: r.id,
    name: r.name,
    color: r.color,
    hoist: r.hoist,
    icon: null,
    unicode_emoji: null,
    position: r.position,
    permissions: r.permissions,
    managed: false,
    mentionable: r.mentionable,
    flags: 0,
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
export type GuildParts = { memberCount: number; roles: RoleRow[]; channels: ChannelRow[]; memberRoleIds?: string[] }

export async function serializeGuild(g: GuildRow, parts?: Omit<GuildParts, 'channels'>) {
  return {
    id: g.id,
    name: g.name,
    icon: null,
    description: null,
    owner_id: g.ownerId,
    features: g.features,
    vanity_url_code: g.vanityUrlCode,
    hub_type: g.hubType,
    member_count: parts ? parts.memberCount : await memberCount(g.id),
    roles: (parts ? parts.roles : await guildRoles(g.id)).map(serializeRole),
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    mfa_level: 0,
    premium_tier: 0,
    nsfw_level: 0,
    preferred_locale: 'en-US',
  }
}

/**
 * GUILD_CREATE and READY carry the channels, and the receiving member: its joined_at, and itself in `members` (as
 * Discord's do; discord.py's `guild.me` and discord.js's `guild.members.me` come from there).
 */
export async function serializeGuildForGateway(g: GuildRow, member?: MemberRow, parts?: GuildParts) {
  return {
    ...await serializeGuild(g, parts),
    channels: (parts ? parts.channels : await guildChannels(g.id)).map(serializeChannelRow),
    members: member ? [await serializeMember(member, await findUser(member.userId), parts?.memberRoleIds)] : [],
    joined_at: member ? new Date(member.joinedAt).toISOString() : null,
    large: false,
    unavailable: false,
  }
}

export async function serializeMember(
  m: MemberRow,
  user: UserRow | undefined,
  roleIds: string[] = await memberRoleIds(m.guildId, m.userId),
) {
  return { user: user ? publicUser(user) : null, ...await memberFields(m, roleIds) }
}

/** A member without its user: MESSAGE_CREATE carries its author's so (discord.py makes `message.author` a Member). */
export async function memberFields(m: MemberRow, roleIds: string[] = await memberRoleIds(m.guildId, m.userId)) {
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
  }
}

/** Members of one guild, with their users and role ids read in one query each. */
export async function serializeMembers(guildId: string, rows: MemberRow[]) {
  const ids = rows.map((m) => m.userId)
  const users = await findUsers(ids)
  const roles = await memberRoleIdsOfUsers(guildId, ids)
  return rows.map((m) => await serializeMember(m, users.get(m.userId), roles.get(m.userId) ?? []))
}

/** A page of messages, with their authors read in one query. */
export async function serializeMessages(rows: MessageRow[], guildId: string) {
  const authors = await findUsers(rows.map((m) => m.authorId))
  // null, not undefined, for an author that is gone: undefined would read it again.
  return rows.map((m) => await serializeMessage(m, guildId, authors.get(m.authorId) ?? null))
}

export async function serializeMessage(
  m: MessageRow,
  guildId: string,
  author: UserRow | null | undefined = await findUser(m.authorId),
) {
  return {
    id: m.id,
    type: 0,
    content: m.content,
    channel_id: m.channelId,
    guild_id: guildId,
    author: author ? publicUser(author) : null,
    attachments: [],
    embeds: [],
    mentions: [],
    mention_roles: [],
    mention_everyone: false,
    pinned: false,
    tts: false,
    timestamp: new Date(m.createdAt).toISOString(),
    edited_timestamp: null,
    flags: 0,
    components: [],
    ...(m.nonce !== null ? { nonce: m.nonce } : {}),
  }
}

export async function serializeInvite(i: InviteRow, guild: GuildRow, channel: ChannelRow) {
  const inviter = i.inviterId ? await findUser(i.inviterId) : undefined
  const target = i.targetUserId ? await findUser(i.targetUserId) : undefined
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
