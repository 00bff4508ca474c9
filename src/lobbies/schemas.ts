// TypeBox schemas of the lobby endpoints. Each field carries every static rule of it (bounds, nullability, the limits
// of a metadata map, the form of a URL): the route's check reports them as Discord's form errors (http/validation.ts)
// and /api/docs shows them, with the examples the docs offer. What needs the database or the network (a member is a
// user, the override URL answers its PING) is the handlers'.
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { Channel } from '../guilds/schemas'
import { Int } from '../http/docs'
import { queryString } from '../http/form'
import { Dict, NullableInt, NullableString, Refine, Snowflake as SnowflakeField } from '../http/validation'
import { webhookUrlProblem } from '../oauth2/event-webhooks'
import {
  IDLE_TIMEOUT_MAX,
  IDLE_TIMEOUT_MIN,
  LOBBY_FLAGS_ALL,
  MAX_CONTENT_CHARS,
  MAX_MEMBERS_PER_REQUEST,
  MAX_METADATA_CHARS,
  MAX_METADATA_KEYS,
  MAX_SECRET_CHARS,
  MAX_WEBHOOK_URL_CHARS,
  MEMBER_FLAGS_ALL,
  MESSAGES_MAX_LIMIT,
  MODERATION_METADATA_KEY_CHARS,
  MODERATION_METADATA_KEYS,
  MODERATION_METADATA_VALUE_CHARS,
} from './limits'

const SNOWFLAKE = '^[0-9]{1,20}$'
const Snowflake = t.String({ pattern: SNOWFLAKE })

/** The user id the bulk example names (put a real user's id there: a member must be an existing user). */
export const EXAMPLE_USER_ID = '1234567890123456789'

const Metadata = t.Optional(
  Dict(
    { maxKeys: MAX_METADATA_KEYS, maxChars: MAX_METADATA_CHARS },
    { description: 'string keys and values, or null' },
  ),
)
const IdleTimeout = t.Optional(
  NullableInt(IDLE_TIMEOUT_MIN, IDLE_TIMEOUT_MAX, {
    description: 'seconds without activity before the lobby closes (PUT: default 300)',
  }),
)
const LobbyFlags = t.Optional(
  NullableInt(0, LOBBY_FLAGS_ALL, { description: 'bit field: 1 REQUIRE_APPLICATION_AUTHORIZATION' }),
)
const MemberFlags = t.Optional(NullableInt(0, MEMBER_FLAGS_ALL, { description: 'bit field: 1 CAN_LINK_LOBBY' }))
/** Its form here; its host and its answer to a signed PING are judged by the handler (event-webhooks.ts). */
const OverrideUrl = t.Optional(
  Refine(
    'OverrideEventWebhooksUrl',
    NullableString(MAX_WEBHOOK_URL_CHARS, {
      description:
        "where this lobby's event webhooks go instead of the application's URL: http(s), a public address, and it must answer a signed PING with a 2xx before it is taken; null clears it (back to the application's URL)",
    }),
    webhookUrlProblem,
  ),
)

export const MemberSchema = t.Object({
  id: SnowflakeField({ description: 'a user id' }),
  metadata: Metadata,
  flags: MemberFlags,
})

export const CreateLobbySchema = t.Object(
  {
    metadata: Metadata,
    members: t.Optional(t.Array(MemberSchema, { maxItems: MAX_MEMBERS_PER_REQUEST })),
    idle_timeout_seconds: IdleTimeout,
    flags: LobbyFlags,
    override_event_webhooks_url: OverrideUrl,
  },
  // No member in the example: a member must be an existing user (see the bulk example), and this one works as it is.
  { examples: [{ metadata: { mode: 'ranked', region: 'eu' }, members: [], idle_timeout_seconds: 300, flags: 0 }] },
)

export const PutLobbySchema = t.Object(
  {
    secret: t.String({ minLength: 1, maxLength: MAX_SECRET_CHARS, description: 'the players of one match share it' }),
    lobby_metadata: Metadata,
    member_metadata: Metadata,
    idle_timeout_seconds: IdleTimeout,
    flags: LobbyFlags,
  },
  {
    examples: [
      {
        secret: 'match-4821',
        lobby_metadata: { mode: 'ranked' },
        member_metadata: { team: 'blue' },
        idle_timeout_seconds: 300,
      },
    ],
  },
)

export const PatchLobbySchema = t.Object(
  {
    metadata: Metadata,
    members: t.Optional(
      t.Array(MemberSchema, { maxItems: MAX_MEMBERS_PER_REQUEST, description: 'replaces the member list' }),
    ),
    idle_timeout_seconds: IdleTimeout,
    flags: LobbyFlags,
    override_event_webhooks_url: OverrideUrl,
  },
  { examples: [{ metadata: { mode: 'casual' }, idle_timeout_seconds: 600 }] },
)

/** PUT .../members/{userId}: the body may be absent, empty or null. */
export const PutMemberSchema = t.Optional(
  t.Nullable(t.Object({ metadata: Metadata, flags: MemberFlags }), {
    description: 'may be absent, empty or null',
    examples: [{ metadata: { team: 'red' }, flags: 1 }],
  }),
)

export const BulkSchema = t.Array(
  t.Object({
    id: MemberSchema.properties.id,
    metadata: Metadata,
    flags: MemberFlags,
    remove_member: t.Optional(t.Nullable(t.Boolean({ description: 'true removes the member' }))),
  }),
  {
    minItems: 1,
    maxItems: MAX_MEMBERS_PER_REQUEST,
    description: 'the last item about a user decides',
    examples: [[{ id: EXAMPLE_USER_ID, metadata: { team: 'red' }, flags: 0 }]],
  },
)

export const MessageSchema = t.Object(
  {
    content: t.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS }),
    metadata: Metadata,
    flags: t.Optional(
      NullableInt(0, 2 ** 31 - 1, {
        description: 'bit field: 4 SUPPRESS_EMBEDS, 4096 SUPPRESS_NOTIFICATIONS (others ignored)',
      }),
    ),
    nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), t.Integer()])),
    tts: t.Optional(t.Boolean()),
    enforce_nonce: t.Optional(
      t.Boolean({ description: 'a retry with the same nonce within 5 minutes answers the original message (200)' }),
    ),
  },
  { examples: [{ content: 'gg', metadata: { kind: 'chat' }, nonce: '1234567890', enforce_nonce: true }] },
)

/** PUT .../moderation-metadata: the body is the map itself; absent or null is {} (it clears the message's). */
export const ModerationMetadataSchema = t.Optional(
  Dict(
    {
      maxKeys: MODERATION_METADATA_KEYS,
      maxKeyChars: MODERATION_METADATA_KEY_CHARS,
      maxChars: MODERATION_METADATA_VALUE_CHARS,
    },
    {
      description: "string keys and values; replaces what the message's moderation wrote ({} or null clears it)",
      examples: [{ verdict: 'allowed', toxicity: '0.02' }],
    },
  ),
)

export const MessagesQuery = t.Object({
  limit: queryString(`integer 1-${MESSAGES_MAX_LIMIT}, default 50`),
  before: queryString('snowflake: messages older than this one'),
  after: queryString('snowflake: messages newer than this one'),
})

export const LinkSchema = t.Optional(
  t.Object(
    {
      channel_id: t.Optional(
        t.Nullable(SnowflakeField({ description: 'a guild text channel; null or absent unlinks' })),
      ),
    },
    { examples: [{ channel_id: '1234567890123456789' }] },
  ),
)

// ---- answers (documentation)

const LobbyMember = t.Object(
  { id: Snowflake, metadata: t.Nullable(t.Record(t.String(), t.String())), flags: Int() },
  { description: 'Lobby member' },
)
/** A member as GET /lobbies/{id} shows it to a user session: with `connected` (in the call) and the public user. */
const LobbyMemberForMember = t.Object(
  {
    id: Snowflake,
    metadata: t.Nullable(t.Record(t.String(), t.String())),
    flags: Int(),
    connected: t.Optional(t.Boolean({ description: 'in the lobby call (user sessions only)' })),
    user: t.Optional(PublicUser),
  },
  { description: 'Lobby member' },
)

/** The fields every answer's lobby has; GET /lobbies/{id} adds what a member's read shows. */
const lobbyFields = {
  id: Snowflake,
  application_id: Snowflake,
  metadata: t.Nullable(t.Record(t.String(), t.String())),
  members: t.Array(LobbyMember),
  flags: Int(),
  linked_channel: t.Optional(Channel),
  override_event_webhooks_url: t.Optional(
    t.String({
      description:
        "where the lobby's event webhooks go instead of the application's URL; shown to the application's Bot only, and only when set",
    }),
  ),
}

export const LobbyAnswer = t.Object(lobbyFields, { description: 'Lobby' })
const LobbyVoiceState = t.Object(
  {
    lobby_id: Snowflake,
    channel_id: t.Null(),
    user_id: Snowflake,
    session_id: t.Nullable(t.String()),
    deaf: t.Boolean(),
    mute: t.Boolean(),
    self_deaf: t.Boolean(),
    self_mute: t.Boolean(),
    self_video: t.Boolean(),
    suppress: t.Boolean(),
    request_to_speak_timestamp: t.Null(),
    connected: t.Boolean(),
  },
  { description: 'Lobby voice state' },
)
/** GET /lobbies/{id}: the lobby; to a user session (a member) as the Gateway shows it, members named. */
export const LobbyReadAnswer = t.Object(
  {
    ...lobbyFields,
    members: t.Array(LobbyMemberForMember),
    voice_states: t.Optional(
      t.Array(LobbyVoiceState, { description: "the members in the call (the web client's first-party token only)" }),
    ),
    application: t.Optional(
      t.Object(
        { id: Snowflake, name: t.String() },
        { description: "the lobby's application (the web client's first-party token only)" },
      ),
    ),
  },
  { description: 'Lobby' },
)
export const LobbyReadList = t.Array(LobbyReadAnswer, { description: "The user's lobbies, newest first" })
export const LobbyMemberAnswer = LobbyMember
export const LobbyMembersAnswer = t.Array(LobbyMember, { description: 'The upserted members' })
export const LobbyMessageAnswer = t.Object(
  {
    id: Snowflake,
    type: Int(),
    content: t.String(),
    lobby_id: Snowflake,
    channel_id: t.String({ pattern: SNOWFLAKE, description: 'the lobby id' }),
    author: PublicUser,
    metadata: t.Optional(t.Record(t.String(), t.String())),
    moderation_metadata: t.Optional(
      t.Record(t.String(), t.String(), {
        description: "what the application's moderation wrote (PUT .../moderation-metadata)",
      }),
    ),
    flags: Int(),
    tts: t.Boolean(),
    application_id: Snowflake,
    timestamp: t.String({ format: 'date-time' }),
    edited_timestamp: t.Optional(
      t.String({ format: 'date-time', description: 'when its moderation metadata last changed' }),
    ),
    nonce: t.Optional(
      t.Union([t.String(), Int()], { description: 'as sent (answers to the POST; not stored for reads)' }),
    ),
  },
  { description: 'Lobby message' },
)
export const LobbyMessagesAnswer = t.Array(LobbyMessageAnswer, { description: 'Messages, newest first' })
export const LobbyInviteAnswer = t.Object({ code: t.String() }, { description: 'The invite code' })
