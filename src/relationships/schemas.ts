// TypeBox schemas of the relationship endpoints, and the answers documented in /api/docs.
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { Int } from '../http/docs'
import { NullableString } from '../http/validation'
import { MAX_NICKNAME_CHARS } from './limits'

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
