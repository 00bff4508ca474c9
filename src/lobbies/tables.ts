import { sql } from 'drizzle-orm'
import {
  bool,
  index,
  int,
  json,
  long,
  primaryKey,
  snowflake,
  table,
  text,
  textEnum,
  timestamp,
  uniqueIndex,
} from '../db/table'
import { applications } from '../oauth2/tables'
import { users } from '../accounts/tables'

export type Metadata = Record<string, string>

export const lobbies = table(
  'lobbies',
  {
    id: snowflake().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    metadata: json<Metadata>(),
    flags: long().notNull().default(0),
    idleTimeoutSeconds: int().notNull(),
    /** sha256 hex of the join secret (PUT /lobbies); unique per application while set. */
    secretHash: text(),
    secretExpiresAt: timestamp(),
    /** Guild text channel linked to the lobby (one lobby per channel). */
    linkedChannelId: snowflake().unique(),
    linkedBy: text(),
    linkedAt: timestamp(),
    /**
     * When the lobby closes for idleness; null while it is active (a member has an identified Gateway session or is in
     * its call). Messages and member changes push it back. The sweeper reads it.
     */
    idleDeadline: timestamp(),
    /** How it was created: `post` (application-managed: members cannot join by secret or leave) or `put` (by secret). */
    createdVia: textEnum(['post', 'put']).notNull().default('put'),
    createdAt: timestamp().notNull(),
    /**
     * Where this lobby's event webhooks go instead of the application's URL (POST/PATCH
     * `override_event_webhooks_url`, PINGed before it is taken); null: the application's URL, if any.
     */
    overrideEventWebhooksUrl: text(),
  },
  (t) => [
    uniqueIndex('lobbies_app_secret_unique').on(t.applicationId, t.secretHash),
    index('lobbies_idle_deadline_idx').on(t.idleDeadline),
  ],
)

export const lobbyMembers = table(
  'lobby_members',
  {
    lobbyId: snowflake()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** Copy of the lobby's application, for the per-user-per-application lobby count. */
    applicationId: snowflake().notNull(),
    metadata: json<Metadata>(),
    flags: long().notNull().default(0),
    /** Gateway session whose lobby voice state (op 17) has the member connected; null when not connected. */
    voiceSessionId: text(),
    selfMute: bool().notNull().default(false),
    selfDeaf: bool().notNull().default(false),
    joinedAt: timestamp().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.lobbyId, t.userId] }),
    index('lobby_members_user_app_idx').on(t.userId, t.applicationId),
    index('lobby_members_voice_session_idx').on(t.voiceSessionId),
  ],
)

export const lobbyMessages = table(
  'lobby_messages',
  {
    id: snowflake().primaryKey(),
    lobbyId: snowflake()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    applicationId: snowflake().notNull(),
    authorId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    content: text().notNull(),
    metadata: json<Metadata>(),
    flags: long().notNull().default(0),
    tts: bool().notNull().default(false),
    /** The client's nonce as sent (string or integer), echoed in the create answer. */
    nonce: json<string | number>(),
    /** Sent with enforce_nonce: the author's next message with the same nonce in the lobby within 5 minutes is this one. */
    enforceNonce: bool().notNull().default(false),
    createdAt: timestamp().notNull(),
    /** What the application's moderation wrote back (PUT .../moderation-metadata); null until it does. */
    moderationMetadata: json<Metadata>(),
    /** When the message last changed after it was sent (its moderation metadata); null if never. */
    editedAt: timestamp(),
    /** The message's copy in the lobby's linked channel, once it was posted there (MESSAGE_UPDATE names it). */
    channelMessageId: snowflake(),
  },
  (t, d) => [
    // Pages are read newest first by the id's number (listMessages): this index answers them without a sort.
    index('lobby_messages_lobby_order_idx').on(t.lobbyId, sql`CAST(${t.id} AS ${d.int64})`),
    // At most one message per author, lobby and enforced nonce: concurrent retries cannot both insert.
    uniqueIndex('lobby_messages_enforced_nonce_unique')
      .on(t.lobbyId, t.authorId, t.nonce)
      .where(sql`${t.enforceNonce} = ${d.true}`),
  ],
)

export type LobbyRow = typeof lobbies.$inferSelect
export type LobbyMemberRow = typeof lobbyMembers.$inferSelect
export type LobbyMessageRow = typeof lobbyMessages.$inferSelect

/**
 * The durable outbox of the applications' event webhooks (oauth2/event-webhooks.ts signs and sends): one row per
 * event, written in the transaction that made the event, deleted once the application's URL took it (at least once).
 * Sent in `id` order per lobby, one at a time; a lobby's deletion takes its undelivered events with it. A node
 * claims a row before it sends it (claimedBy, claimedUntil), so that one node sends it.
 */
export const lobbyEventDeliveries = table(
  'lobby_event_deliveries',
  {
    id: long().primaryKey({ autoIncrement: true }),
    lobbyId: snowflake()
      .notNull()
      .references(() => lobbies.id, { onDelete: 'cascade' }),
    applicationId: snowflake().notNull(),
    /** The envelope as it is signed and sent: {version: 1, application_id, type: 1, event: {type, timestamp, data}}. */
    body: text().notNull(),
    attempts: int().notNull().default(0),
    nextAttemptAt: timestamp().notNull(),
    /** Why the last attempt failed (a status or a network error), for operators. */
    lastError: text(),
    createdAt: timestamp().notNull(),
    /** Since when every attempt failed (null until one did; reset when the lobby's URL changes): the stop rule. */
    failingSince: long(),
    /** The node sending it now, and until when its claim holds (a node that died is taken over after that). */
    claimedBy: text(),
    claimedUntil: timestamp(),
  },
  (t) => [index('lobby_event_deliveries_lobby_idx').on(t.lobbyId, t.id)],
)
export type LobbyEventDeliveryRow = typeof lobbyEventDeliveries.$inferSelect
