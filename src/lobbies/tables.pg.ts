// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgTable, primaryKey, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { jsonText, long, text } from '../db/pg/columns'
import { applications } from '../oauth2/tables.pg'
import type { Metadata } from './tables'

export const lobbies = pgTable(
  'lobbies',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    metadata: jsonText<Metadata>(),
    flags: long().notNull().default(0),
    idleTimeoutSeconds: integer().notNull(),
    secretHash: text(),
    secretExpiresAt: long(),
    linkedChannelId: text().unique(),
    linkedBy: text(),
    linkedAt: long(),
    idleDeadline: long(),
    createdVia: text().$type<'post' | 'put'>().notNull().default('put'),
    createdAt: long().notNull(),
    overrideEventWebhooksUrl: text(),
  },
  (t) => [
    uniqueIndex('lobbies_app_secret_unique').on(t.applicationId, t.secretHash),
    index('lobbies_idle_deadline_idx').on(t.idleDeadline),
  ],
)

export const lobbyMembers = pgTable(
  'lobby_members',
  {
    lobbyId: text()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    applicationId: text().notNull(),
    metadata: jsonText<Metadata>(),
    flags: long().notNull().default(0),
    voiceSessionId: text(),
    selfMute: boolean().notNull().default(false),
    selfDeaf: boolean().notNull().default(false),
    joinedAt: long().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.lobbyId, t.userId] }),
    index('lobby_members_user_app_idx').on(t.userId, t.applicationId),
    index('lobby_members_voice_session_idx').on(t.voiceSessionId),
  ],
)

/** Pages walk (lobby_id, the id's number): CAST(id AS bigint) where SQLite casts AS INTEGER (both 64-bit). */
export const lobbyMessages = pgTable(
  'lobby_messages',
  {
    id: text().primaryKey(),
    lobbyId: text()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    applicationId: text().notNull(),
    authorId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text().notNull(),
    metadata: jsonText<Metadata>(),
    flags: long().notNull().default(0),
    tts: boolean().notNull().default(false),
    nonce: jsonText<string | number>(),
    enforceNonce: boolean().notNull().default(false),
    createdAt: long().notNull(),
    moderationMetadata: jsonText<Metadata>(),
    editedAt: long(),
    channelMessageId: text(),
  },
  (t) => [
    index('lobby_messages_lobby_order_idx').on(t.lobbyId, sql`CAST(${t.id} AS bigint)`),
    uniqueIndex('lobby_messages_enforced_nonce_unique')
      .on(t.lobbyId, t.authorId, t.nonce)
      .where(sql`${t.enforceNonce} = true`),
  ],
)

export const lobbyEventDeliveries = pgTable(
  'lobby_event_deliveries',
  {
    id: long().primaryKey().generatedByDefaultAsIdentity(),
    lobbyId: text()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    applicationId: text().notNull(),
    body: text().notNull(),
    attempts: integer().notNull().default(0),
    nextAttemptAt: long().notNull(),
    lastError: text(),
    createdAt: long().notNull(),
    failingSince: long(),
    claimedBy: text(),
    claimedUntil: long(),
  },
  (t) => [index('lobby_event_deliveries_lobby_idx').on(t.lobbyId, t.id)],
)
