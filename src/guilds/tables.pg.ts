// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgTable, primaryKey, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { jsonDefault, jsonText, long, text } from '../db/pg/columns'
import type { Embed, Mentions } from './tables'

export const guilds = pgTable('guilds', {
  id: text().primaryKey(),
  name: text().notNull(),
  ownerId: text()
    .notNull()
    .references(() => users.id),
  features: jsonText<string[]>().notNull().default(jsonDefault([])),
  vanityUrlCode: text().unique(),
  hubType: integer(),
  createdAt: long().notNull(),
})

export const roles = pgTable(
  'guild_roles',
  {
    id: text().primaryKey(),
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    name: text().notNull(),
    permissions: text().notNull(),
    position: integer().notNull(),
    color: integer().notNull().default(0),
    hoist: boolean().notNull().default(false),
    mentionable: boolean().notNull().default(false),
    botId: text(),
  },
  (t) => [index('guild_roles_guild_idx').on(t.guildId)],
)

export const members = pgTable(
  'guild_members',
  {
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    nick: text(),
    joinedAt: long().notNull(),
    communicationDisabledUntil: long(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] }), index('guild_members_user_idx').on(t.userId)],
)

export const memberRoles = pgTable(
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

export const bans = pgTable(
  'guild_bans',
  {
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    reason: text(),
    createdAt: long().notNull(),
  },
  (t) => [primaryKey({ columns: [t.guildId, t.userId] })],
)

export const channels = pgTable(
  'channels',
  {
    id: text().primaryKey(),
    guildId: text()
      .notNull()
      .references(() => guilds.id, { onDelete: 'cascade' }),
    type: integer().notNull(),
    name: text().notNull(),
    topic: text(),
    position: integer().notNull().default(0),
    nsfw: boolean().notNull().default(false),
    lastMessageId: text(),
    createdAt: long().notNull(),
  },
  (t) => [index('channels_guild_idx').on(t.guildId)],
)

/** Pages walk (channel_id, the id's number): CAST(id AS bigint) where SQLite casts AS INTEGER (both 64-bit). */
export const messages = pgTable(
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
    createdAt: long().notNull(),
    editedAt: long(),
    embeds: jsonText<Embed[]>().notNull().default(jsonDefault([])),
    pinnedAt: long(),
    referenceId: text(),
    mentions: jsonText<Mentions>()
      .notNull()
      .default(jsonDefault({ users: [], roles: [], everyone: false })),
  },
  (t) => [
    index('channel_messages_channel_order_idx').on(t.channelId, sql`CAST(${t.id} AS bigint)`),
    index('channel_messages_pins_idx').on(t.channelId, t.pinnedAt).where(sql`${t.pinnedAt} IS NOT NULL`),
  ],
)

export const reactions = pgTable(
  'channel_message_reactions',
  {
    messageId: text()
      .notNull()
      .references(() => messages.id, { onDelete: 'cascade' }),
    emoji: text().notNull(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: long().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.messageId, t.emoji, t.userId] }),
    index('channel_message_reactions_user_idx').on(t.userId),
  ],
)

export const invites = pgTable(
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
    maxAge: integer().notNull(),
    maxUses: integer().notNull(),
    uses: integer().notNull().default(0),
    temporary: boolean().notNull().default(false),
    createdAt: long().notNull(),
    expiresAt: long(),
  },
  (t) => [index('invites_channel_idx').on(t.channelId), uniqueIndex('invites_code_idx').on(t.code)],
)
