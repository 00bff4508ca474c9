import { sql } from 'drizzle-orm'
import { bool, index, int, json, primaryKey, snowflake, table, text, timestamp, uniqueIndex } from '../db/table'
import { users } from '../accounts/tables'

export const guilds = table('guilds', {
  id: snowflake().primaryKey(),
  name: text().notNull(),
  ownerId: snowflake()
    .notNull()
    .references(() => users.id),
  /** Operator-set (server guild set): Discord feature strings. */
  features: json<string[]>().notNull().default([]),
  vanityUrlCode: text().unique(),
  hubType: int(),
  createdAt: timestamp().notNull(),
})

export const roles = table(
  'guild_roles',
  {
    id: snowflake().primaryKey(),
    guildId: snowflake()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    /** Permission bits as a decimal string (64-bit). */
    permissions: text().notNull(),
    position: int().notNull(),
    color: int().notNull().default(0),
    hoist: bool().notNull().default(false),
    mentionable: bool().notNull().default(false),
    /**
     * The bot this role was made for when the bot was added (OAuth2's bot scope): Discord's `tags.bot_id`, and the
     * role is `managed` (nobody deletes, gives or takes it; it goes when the bot leaves). Null: an ordinary role.
     */
    botId: snowflake(),
  },
  (t) => [index('guild_roles_guild_idx').on(t.guildId)],
)

export const members = table(
  'guild_members',
  {
    guildId: snowflake()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    nick: text(),
    joinedAt: timestamp().notNull(),
    /** ms; until then the member only reads (a timeout); null or past: not timed out */
    communicationDisabledUntil: timestamp(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] }), index('guild_members_user_idx').on(t.userId)],
)

export const memberRoles = table(
  'guild_member_roles',
  {
    guildId: snowflake().notNull(),
    userId: snowflake().notNull(),
    roleId: snowflake()
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId, t.roleId] }), index('guild_member_roles_role_idx').on(t.roleId)],
)

/** Users banned from a guild (BAN_MEMBERS): they cannot join it again until the ban is lifted. */
export const bans = table(
  'guild_bans',
  {
    guildId: snowflake()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The X-Audit-Log-Reason the ban was made with. */
    reason: text(),
    createdAt: timestamp().notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] })],
)

export const channels = table(
  'channels',
  {
    id: snowflake().primaryKey(),
    /** Null: a DM channel (type 1), whose two recipients are its dm_channels row. */
    guildId: snowflake().references(() => guilds.id, { onDelete: 'cascade' }),
    /** 0 text, 1 DM, 2 voice */
    type: int().notNull(),
    name: text().notNull(),
    topic: text(),
    position: int().notNull().default(0),
    nsfw: bool().notNull().default(false),
    lastMessageId: snowflake(),
    createdAt: timestamp().notNull(),
  },
  (t) => [index('channels_guild_idx').on(t.guildId)],
)

/**
 * A DM channel's two recipients, the lower id first: the unique pair makes one DM channel per two users (a parallel
 * create finds the row the first one wrote). Its own table rather than columns of channels: guild channels stay as
 * they are, and the pair's index is only over DMs.
 */
export const dmChannels = table(
  'dm_channels',
  {
    channelId: snowflake()
      .primaryKey()
      .references(() => channels.id, { onDelete: 'cascade' }),
    lowUserId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    highUserId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [
    uniqueIndex('dm_channels_pair_idx').on(t.lowUserId, t.highUserId),
    index('dm_channels_high_idx').on(t.highUserId),
  ],
)

/** A message's mentions: user ids, role ids, and whether it mentions everyone (@everyone or @here). */
export type Mentions = { users: string[]; roles: string[]; everyone: boolean }
export const NO_MENTIONS: Mentions = { users: [], roles: [], everyone: false }

export const messages = table(
  'channel_messages',
  {
    id: snowflake().primaryKey(),
    channelId: snowflake()
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    authorId: snowflake()
      .notNull()
      .references(() => users.id),
    content: text().notNull(),
    nonce: text(),
    createdAt: timestamp().notNull(),
    /** ms; null: never edited */
    editedAt: timestamp(),
    /** Rich embeds as the author sent them (embeds.ts normalizes them). */
    embeds: json<Embed[]>().notNull().default([]),
    /** ms; null: not pinned */
    pinnedAt: timestamp(),
    /** The message this one replies to (in the same channel; Discord's message_reference); null: not a reply. */
    referenceId: snowflake(),
    /** Who and what it mentions, resolved when it was sent or its content edited (mentions.ts). */
    mentions: json<Mentions>().notNull().default(NO_MENTIONS),
  },
  // Pages are read newest first by the id's number (channelMessages): this index answers them without a sort, and
  // without reading the channel's older messages. Pins are read and counted (50 per channel) from their own index.
  (t, d) => [
    index('channel_messages_channel_order_idx').on(t.channelId, sql`CAST(${t.id} AS ${d.int64})`),
    index('channel_messages_pins_idx').on(t.channelId, t.pinnedAt).where(sql`${t.pinnedAt} IS NOT NULL`),
  ],
)

/** One row per user and emoji on a message (unicode emoji only: the model has no custom emoji). */
export const reactions = table(
  'channel_message_reactions',
  {
    messageId: snowflake()
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    emoji: text().notNull(),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.messageId, t.emoji, t.userId] }),
    index('channel_message_reactions_user_idx').on(t.userId),
  ],
)

export const invites = table(
  'invites',
  {
    code: text().primaryKey(),
    guildId: snowflake()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    channelId: snowflake()
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    inviterId: snowflake().references(() => users.id, { onDelete: 'set null' }),
    targetUserId: snowflake(),
    /** seconds; 0 = never expires */
    maxAge: int().notNull(),
    /** 0 = unlimited */
    maxUses: int().notNull(),
    uses: int().notNull().default(0),
    temporary: bool().notNull().default(false),
    createdAt: timestamp().notNull(),
    /** ms; null = never */
    expiresAt: timestamp(),
  },
  (t) => [index('invites_channel_idx').on(t.channelId), uniqueIndex('invites_code_idx').on(t.code)],
)

/** A rich embed as stored and answered (Discord's embed object, the fields a bot sends). */
export type Embed = {
  type: 'rich'
  title?: string
  description?: string
  url?: string
  timestamp?: string
  color?: number
  footer?: { text: string; icon_url?: string }
  image?: { url: string }
  thumbnail?: { url: string }
  author?: { name: string; url?: string; icon_url?: string }
  fields?: { name: string; value: string; inline: boolean }[]
}

export type GuildRow = typeof guilds.$inferSelect
export type RoleRow = typeof roles.$inferSelect
export type MemberRow = typeof members.$inferSelect
export type ChannelRow = typeof channels.$inferSelect
/** A guild's channel (every channel but a DM). */
export type GuildChannelRow = ChannelRow & { guildId: string }
export type DmChannelRow = typeof dmChannels.$inferSelect
export type MessageRow = typeof messages.$inferSelect
export type InviteRow = typeof invites.$inferSelect
export type BanRow = typeof bans.$inferSelect
export type ReactionRow = typeof reactions.$inferSelect
