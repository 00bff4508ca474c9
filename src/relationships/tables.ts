// Relationships (issue 45): friends, blocks and pending friend requests, one row per side (Discord's relationship
// object is always one user's view of another).
import { index, int, json, primaryKey, snowflake, table, text, timestamp } from '../db/table'
import { users } from '../accounts/tables'

/**
 * What `userId` has with `otherId`: 1 FRIEND, 2 BLOCKED, 3 INCOMING_REQUEST, 4 OUTGOING_REQUEST (Discord's types).
 * A friendship is two rows of type 1; a request is a 4 on the sender's side and a 3 on the receiver's; a block is the
 * blocker's row alone (the other side keeps nothing, or its own block).
 */
export const relationships = table(
  'relationships',
  {
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    otherId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: int().notNull(),
    /** The user's own name for a friend (1-32 characters), or null. */
    nickname: text(),
    /** When this relationship began (ms): the request, the friendship, the block. */
    since: timestamp().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.otherId] }),
    index('relationships_user_type_idx').on(t.userId, t.type),
    index('relationships_other_idx').on(t.otherId),
  ],
)

export type RelationshipRow = typeof relationships.$inferSelect

/** An activity as a client sets it with Gateway op 3 (its `secrets` are kept for the user alone). */
export type Activity = {
  name: string
  type: number
  state?: string | null
  details?: string | null
  application_id?: string
  timestamps?: { start?: number; end?: number }
  party?: { id?: string; size?: [number, number] }
  assets?: { large_image?: string; large_text?: string; small_image?: string; small_text?: string }
  secrets?: { join?: string; spectate?: string; match?: string }
}

/**
 * A user's presence while at least one of its Gateway sessions is live (any node): the status and activities its last
 * op 3 set. The row goes when the last session ends; a row whose user is not online (a restart) counts for nothing.
 */
export const presences = table('presences', {
  userId: snowflake()
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  /** online | idle | dnd | invisible */
  status: text().notNull(),
  activities: json<Activity[]>().notNull().default([]),
  updatedAt: timestamp().notNull(),
})

export type PresenceRow = typeof presences.$inferSelect

/**
 * Game relationships (issue 45, part 2): friends that exist only inside one application's game, one row per side, as
 * `relationships` (1 FRIEND, 3 INCOMING_REQUEST, 4 OUTGOING_REQUEST; no block: blocks are the Discord-wide list's).
 */
export const gameRelationships = table(
  'game_relationships',
  {
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    otherId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The game's application (no foreign key: oauth2/ shares this domain's floor). */
    applicationId: snowflake().notNull(),
    type: int().notNull(),
    since: timestamp().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.applicationId, t.otherId] }),
    index('game_relationships_other_idx').on(t.otherId),
  ],
)

export type GameRelationshipRow = typeof gameRelationships.$inferSelect

/**
 * Game invites (issue 45, part 4): a player invites a friend to what it plays (type 1, JOIN: the sender's activity of
 * the application, with its join secret, which only the recipient is shown), or asks to join a friend's (type 5,
 * JOIN_REQUEST). Kept until deleted or `expiresAt`, after which nobody sees it.
 */
export const gameInvites = table(
  'game_invites',
  {
    id: snowflake().primaryKey(),
    /** The game's application (no foreign key: oauth2/ shares this domain's floor). */
    applicationId: snowflake().notNull(),
    senderId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    recipientId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: int().notNull(),
    /** JOIN: the sender's activity when it invited (secrets included); JOIN_REQUEST: none. */
    activity: json<Activity | null>(),
    content: text().notNull().default(''),
    createdAt: timestamp().notNull(),
    expiresAt: timestamp().notNull(),
  },
  (t) => [index('game_invites_recipient_idx').on(t.recipientId), index('game_invites_sender_idx').on(t.senderId)],
)

export type GameInviteRow = typeof gameInvites.$inferSelect
