// TypeBox schemas of the relationship endpoints, and the answers documented in /api/docs.
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { Int } from '../http/docs'
import { NullableString, Snowflake } from '../http/validation'
import { GAME_INVITE_TTL, MAX_INVITE_CONTENT, MAX_NICKNAME_CHARS } from './limits'

/** POST /users/@me/relationships: a friend request by username (discriminator: "0" or null for today's names). */
export const RequestByNameSchema = t.Object(
  {
    username: t.String({ minLength: 1, maxLength: 32 }),
    discriminator: t.Optional(NullableString(4)),
  },
  { examples: [{ username: 'someone' }] },
)

/**
 * PUT /users/@me/relationships/{user.id}: no type (or -1, or 1) sends a friend request or accepts the one received;
 * 2 blocks. The other types are not something a client creates.
 */
export const PutRelationshipSchema = t.Optional(
  t.Object(
    {
      type: t.Optional(
        t.Union([t.Literal(-1), t.Literal(1), t.Literal(2)], { description: '-1 or 1: friend; 2: block' }),
      ),
      from_friend_suggestion: t.Optional(t.Boolean()),
      friend_token: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
    },
    { examples: [{}, { type: 2 }] },
  ),
)

/** PATCH /users/@me/relationships/{user.id}: a friend's nickname; null or "" clears it. */
export const PatchRelationshipSchema = t.Object(
  { nickname: t.Optional(NullableString(MAX_NICKNAME_CHARS)) },
  { examples: [{ nickname: 'Duo partner' }] },
)

export const Relationship = t.Object(
  {
    id: t.String(),
    type: Int({ description: '1 FRIEND, 2 BLOCKED, 3 INCOMING_REQUEST, 4 OUTGOING_REQUEST' }),
    user: PublicUser,
    nickname: t.Nullable(t.String()),
    is_spam_request: t.Boolean(),
    user_ignored: t.Boolean(),
    since: t.String({ description: 'ISO 8601' }),
  },
  { description: 'Relationship' },
)

export const RelationshipList = t.Array(Relationship, { description: "The user's relationships, oldest first" })

/** POST /users/@me/game-relationships: a game friend request by username. */
export const GameRequestByNameSchema = t.Object(
  { username: t.String({ minLength: 1, maxLength: 32 }) },
  { examples: [{ username: 'someone' }] },
)

/** PUT /users/@me/game-relationships/{user.id}: no type (or -1, or 1) sends a game friend request or accepts one. */
export const PutGameRelationshipSchema = t.Optional(
  t.Object(
    { type: t.Optional(t.Union([t.Literal(-1), t.Literal(1)], { description: '-1 or 1: friend' })) },
    { examples: [{}] },
  ),
)

export const GameRelationship = t.Object(
  {
    id: t.String(),
    application_id: t.String(),
    type: Int({ description: '1 FRIEND, 3 INCOMING_REQUEST, 4 OUTGOING_REQUEST' }),
    user: PublicUser,
    since: t.String({ description: 'ISO 8601' }),
    dm_access_type: Int(),
    user_id: t.String(),
  },
  { description: 'Game relationship' },
)

export const GameRelationshipList = t.Array(GameRelationship, {
  description: "The user's game relationships (an OAuth2 token: of its application's game), oldest first",
})

/** POST /game-invite/@me: invite a friend to what one plays (type 1), or ask to join a friend's (type 5). */
export const GameInviteSchema = t.Object(
  {
    recipient_id: Snowflake(),
    type: t.Optional(t.Union([t.Literal(1), t.Literal(5)], { description: '1 JOIN (default), 5 JOIN_REQUEST' })),
    content: t.Optional(t.String({ maxLength: MAX_INVITE_CONTENT })),
    ttl: t.Optional(
      t.Nullable(
        t.Integer({
          minimum: GAME_INVITE_TTL.min,
          maximum: GAME_INVITE_TTL.max,
          description: `Seconds (default ${GAME_INVITE_TTL.default})`,
        }),
      ),
    ),
  },
  { examples: [{ recipient_id: '1234567890123456789', content: 'Come play' }] },
)

export const GameInviteCreated = t.Object({ invite_id: t.String() }, { description: 'The invite made' })

const OptString = t.Optional(t.Nullable(t.String()))
/** An activity as an invite shows it (Discord's rich presence fields). */
const InviteActivity = t.Object(
  {
    name: t.String(),
    type: Int(),
    state: OptString,
    details: OptString,
    application_id: t.Optional(t.String()),
    timestamps: t.Optional(t.Object({ start: t.Optional(Int()), end: t.Optional(Int()) })),
    party: t.Optional(t.Object({ id: t.Optional(t.String()), size: t.Optional(t.Array(Int())) })),
    assets: t.Optional(
      t.Object({
        large_image: t.Optional(t.String()),
        large_text: t.Optional(t.String()),
        small_image: t.Optional(t.String()),
        small_text: t.Optional(t.String()),
      }),
    ),
    secrets: t.Optional(t.Object({ join: t.Optional(t.String()) }, { description: "The recipient's copy only" })),
  },
  { description: "JOIN: the inviter's activity (secrets.join only in the recipient's copy); JOIN_REQUEST: null" },
)

export const GameInvite = t.Object(
  {
    invite_id: t.String(),
    type: Int({ description: '1 JOIN, 5 JOIN_REQUEST' }),
    application_id: t.String(),
    application_name: t.String(),
    inviter_id: t.String(),
    recipient_id: t.String(),
    created_at: t.String({ description: 'ISO 8601' }),
    ttl: Int({ description: 'Seconds from created_at until it expires' }),
    content: t.String(),
    activity: t.Nullable(InviteActivity),
  },
  { description: 'Game invite' },
)

export const GameInviteList = t.Array(GameInvite, {
  description: 'The live invites the user sent or received (an OAuth2 token: of its application), newest first',
})
