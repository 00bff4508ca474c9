import { sql } from 'drizzle-orm'
import { sqliteTable, text, integer, index, primaryKey, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from '../accounts/tables'

export const guilds = sqliteTable('guilds', {
  id: text().primaryKey(),
  name: text().notNull(),
  ownerId: text()
    .notNull()
    .references(() => users.id),
  /** Operator-set (server guild set): Discord feature strings. */
  features: text({ mode: 'json' }).$type<string[]>().notNull().default([]),
  vanityUrlCode: text().unique(),
  hubType: integer(),
  createdAt: integer().notNull(),
})

export const roles = sqliteTable(
  'guild_roles',
  {
    id: text().primaryKey(),
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    /** Permission bits as a decimal string (64-bit). */
    permissions: text().notNull(),
    position: integer().notNull(),
    color: integer().notNull().default(0),
    hoist: integer({ mode: 'boolean' }).notNull().default(false),
    mentionable: integer({ mode: 'boolean' }).notNull().default(false),
    /**
     * The bot this role was made for when the bot was added (OAuth2's bot scope): Discord's `tags.bot_id`, and the
     * role is `managed` (nobody deletes, gives or takes it; it goes when the bot leaves). Null: an ordinary role.
     */
    botId: text(),
  },
  (t) => [index('guild_roles_guild_idx').on(t.guildId)],
)

export const members = sqliteTable(
  'guild_members',
  {
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    nick: text(),
    joinedAt: integer().notNull(),
    /** ms; until then the member only reads (a timeout); null or past: not timed out */
    communicationDisabledUntil: integer(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] }), index('guild_members_user_idx').on(t.userId)],
)

export const memberRoles = sqliteTable(
  'guild_member_roles',
  {
    guildId: text().notNull(),
    userId: text().notNull(),
    roleId: text()
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId, t.roleId] }), index('guild_member_roles_role_idx').on(t.roleId)],
)

/** Users banned from a guild (BAN_MEMBERS): they cannot join it again until the ban is lifted. */
export const bans = sqliteTable(
  'guild_bans',
  {
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The X-Audit-Log-Reason the ban was made with. */
    reason: text(),
    createdAt: integer().notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] })],
)

export const channels = sqliteTable(
  'channels',
  {
    id: text().primaryKey(),
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    /** 0 text, 2 voice */
    type: integer().notNull(),
    name: text().notNull(),
    topic: text(),
    position: integer().notNull().default(0),
    nsfw: integer({ mode: 'boolean' }).notNull().default(false),
    lastMessageId: text(),
    createdAt: integer().notNull(),
  },
  (t) => [index('channels_guild_idx').on(t.guildId)],
)

/** A message's mentions: user ids, role ids, and whether it mentions everyone (@everyone or @here). */
export type Mentions = { users: string[]; roles: string[]; everyone: boolean }
export const NO_MENTIONS: Mentions = { users: [], roles: [], everyone: false }

export const messages = sqliteTable(
  'channel_messages',
  {
    id: text().primaryKey(),
    channelId: text()
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    authorId: text()
      .notNull()
      .references(() => users.id),
    content: text().notNull(),
    nonce: text(),
    createdAt: integer().notNull(),
    /** ms; null: never edited */
    editedAt: integer(),
    /** Rich embeds as the author sent them (embeds.ts normalizes them). */
    embeds: text({ mode: 'json' }).$type<Embed[]>().notNull().default([]),
    /** ms; null: not pinned */
    pinnedAt: integer(),
    /** The message this one replies to (in the same channel; Discord's message_reference); null: not a reply. */
    referenceId: text(),
    /** Who and what it mentions, resolved when it was sent or its content edited (mentions.ts). */
    mentions: text({ mode: 'json' }).$type<Mentions>().notNull().default(NO_MENTIONS),
  },
  // Pages are read newest first by the id's number (channelMessages): this index answers them without a sort, and
  // without reading the channel's older messages. Pins are read and counted (50 per channel) from their own index.
  (t) => [
    index('channel_messages_channel_order_idx').on(t.channelId, sql`CAST(${t.id} AS INTEGER)`),
    index('channel_messages_pins_idx').on(t.channelId, t.pinnedAt).where(sql`${t.pinnedAt} IS NOT NULL`),
  ],
)

/** One row per user and emoji on a message (unicode emoji only: the model has no custom emoji). */
export const reactions = sqliteTable(
  'channel_message_reactions',
  {
    messageId: text()
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    emoji: text().notNull(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.messageId, t.emoji, t.userId] }),
    index('channel_message_reactions_user_idx').on(t.userId),
  ],
)

export const invites = sqliteTable(
  'invites',
  {
    code: text().primaryKey(),
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    channelId: text()
      .notNull()
      .references(() => channels.id, { onDelete: 'cascade' }),
    inviterId: text().references(() => users.id, { onDelete: 'set null' }),
    targetUserId: text(),
    /** seconds; 0 = never expires */
    maxAge: integer().notNull(),
    /** 0 = unlimited */
    maxUses: integer().notNull(),
    uses: integer().notNull().default(0),
    temporary: integer({ mode: 'boolean' }).notNull().default(false),
    createdAt: integer().notNull(),
    /** ms; null = never */
    expiresAt: integer(),
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
export type MessageRow = typeof messages.$inferSelect
export type InviteRow = typeof invites.$inferSelect
export type BanRow = typeof bans.$inferSelect
export type ReactionRow = typeof reactions.$inferSelect
