// TypeBox schemas of the lobby endpoints. Metadata maps and nullable integers are t.Unknown here and checked by
// FormCheck (validate.ts), which reports key count, key/value length and bounds the way Discord's form errors do; the
// API docs show the bodies as the wire has them (the *Doc schemas below, with the examples the docs offer).
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { Channel } from '../guilds/schemas'
import { Int } from '../http/docs'
import { queryString } from '../http/form'
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
const Metadata = t.Optional(t.Unknown({ description: 'object of string keys and values, or null' }))
// Nullable integers are checked by FormCheck.int (bounds below) so the error names the bound.
const IdleTimeout = t.Optional(t.Unknown({ description: `integer ${IDLE_TIMEOUT_MIN}-${IDLE_TIMEOUT_MAX} or null` }))
const LobbyFlags = t.Optional(t.Unknown({ description: `integer bit field (max ${LOBBY_FLAGS_ALL}) or null` }))
const MemberFlags = t.Optional(t.Unknown({ description: `integer bit field (max ${MEMBER_FLAGS_ALL}) or null` }))
const OverrideUrl = t.Optional(
  t.Unknown({ description: `http(s) URL of at most ${MAX_WEBHOOK_URL_CHARS} characters, or null` }),
)

export const MemberSchema = t.Object({ id: Snowflake, metadata: Metadata, flags: MemberFlags })

export const CreateLobbySchema = t.Object({
  metadata: Metadata,
  members: t.Optional(t.Array(MemberSchema, { maxItems: MAX_MEMBERS_PER_REQUEST })),
  idle_timeout_seconds: IdleTimeout,
  flags: LobbyFlags,
  override_event_webhooks_url: OverrideUrl,
})

export const PutLobbySchema = t.Object({
  secret: t.String({ minLength: 1, maxLength: MAX_SECRET_CHARS }),
  lobby_metadata: Metadata,
  member_metadata: Metadata,
  idle_timeout_seconds: IdleTimeout,
  flags: LobbyFlags,
})

export const PatchLobbySchema = t.Object({
  metadata: Metadata,
  members: t.Optional(t.Array(MemberSchema, { maxItems: MAX_MEMBERS_PER_REQUEST })),
  idle_timeout_seconds: IdleTimeout,
  flags: LobbyFlags,
  override_event_webhooks_url: OverrideUrl,
})

export const BulkSchema = t.Array(
  t.Object({
    id: Snowflake,
    metadata: Metadata,
    flags: MemberFlags,
    remove_member: t.Optional(t.Unknown({ description: 'boolean or null' })),
  }),
  { minItems: 1, maxItems: MAX_MEMBERS_PER_REQUEST },
)

export const MessageSchema = t.Object({
  content: t.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS }),
  metadata: Metadata,
  flags: t.Optional(t.Unknown({ description: 'integer bit field or null' })),
  nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), t.Integer()])),
  tts: t.Optional(t.Boolean()),
  enforce_nonce: t.Optional(t.Boolean()),
})

export const MessagesQuery = t.Object({
  limit: queryString(`integer 1-${MESSAGES_MAX_LIMIT}, default 50`),
  before: queryString('snowflake: messages older than this one'),
  after: queryString('snowflake: messages newer than this one'),
})

export const LinkSchema = t.Optional(
  t.Object({ channel_id: t.Optional(t.Unknown({ description: 'snowflake or null' })) }),
)

// ---- bodies as the API docs show them (the schemas above take any value where FormCheck judges it)

/** The user id the bulk example names (put a real user's id there: a member must be an existing user). */
export const EXAMPLE_USER_ID = '1234567890123456789'
const MetadataDoc = t.Optional(
  t.Nullable(t.Record(t.String(), t.String({ maxLength: MAX_METADATA_CHARS })), {
    maxProperties: MAX_METADATA_KEYS,
    description: `string keys and values (at most ${MAX_METADATA_KEYS} keys, each key and value at most ${MAX_METADATA_CHARS} characters), or null`,
  }),
)
const nullableInt = (minimum: number, maximum: number, description: string) =>
  t.Optional(t.Nullable(Int({ minimum, maximum }), { description }))
const IdleTimeoutDoc = nullableInt(
  IDLE_TIMEOUT_MIN,
  IDLE_TIMEOUT_MAX,
  'seconds without activity before the lobby closes (PUT: default 300)',
)
const LobbyFlagsDoc = nullableInt(0, LOBBY_FLAGS_ALL, 'bit field: 1 REQUIRE_APPLICATION_AUTHORIZATION')
const MemberFlagsDoc = nullableInt(0, MEMBER_FLAGS_ALL, 'bit field: 1 CAN_LINK_LOBBY')
const MemberDoc = t.Object({
  id: t.String({ pattern: SNOWFLAKE, description: 'a user id' }),
  metadata: MetadataDoc,
  flags: MemberFlagsDoc,
})
const MembersDoc = t.Optional(t.Array(MemberDoc, { maxItems: MAX_MEMBERS_PER_REQUEST }))
const OverrideUrlDoc = t.Optional(
  t.Nullable(t.String({ format: 'uri', maxLength: MAX_WEBHOOK_URL_CHARS }), {
    description:
      "where this lobby's event webhooks go instead of the application's URL: http(s), a public address, and it must answer a signed PING with a 2xx before it is taken; null clears it (back to the application's URL)",
  }),
)

export const CreateLobbyDoc = t.Object(
  {
    metadata: MetadataDoc,
    members: MembersDoc,
    idle_timeout_seconds: IdleTimeoutDoc,
    flags: LobbyFlagsDoc,
    override_event_webhooks_url: OverrideUrlDoc,
  },
  // No member in the example: a member must be an existing user (see the bulk example), and this one works as it is.
  { examples: [{ metadata: { mode: 'ranked', region: 'eu' }, members: [], idle_timeout_seconds: 300, flags: 0 }] },
)
export const PutLobbyDoc = t.Object(
  {
    secret: t.String({ minLength: 1, maxLength: MAX_SECRET_CHARS, description: 'the players of one match share it' }),
    lobby_metadata: MetadataDoc,
    member_metadata: MetadataDoc,
    idle_timeout_seconds: IdleTimeoutDoc,
    flags: LobbyFlagsDoc,
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
export const PatchLobbyDoc = t.Object(
  {
    metadata: MetadataDoc,
    members: t.Optional(
      t.Array(MemberDoc, { maxItems: MAX_MEMBERS_PER_REQUEST, description: 'replaces the member list' }),
    ),
    idle_timeout_seconds: IdleTimeoutDoc,
    flags: LobbyFlagsDoc,
    override_event_webhooks_url: OverrideUrlDoc,
  },
  { examples: [{ metadata: { mode: 'casual' }, idle_timeout_seconds: 600 }] },
)
export const PutMemberDoc = t.Optional(
  t.Nullable(t.Object({ metadata: MetadataDoc, flags: MemberFlagsDoc }), {
    description: 'may be absent, empty or null',
    examples: [{ metadata: { team: 'red' }, flags: 1 }],
  }),
)
export const BulkDoc = t.Array(
  t.Object({
    id: MemberDoc.properties.id,
    metadata: MetadataDoc,
    flags: MemberFlagsDoc,
    remove_member: t.Optional(t.Nullable(t.Boolean(), { description: 'true removes the member' })),
  }),
  {
    minItems: 1,
    maxItems: MAX_MEMBERS_PER_REQUEST,
    description: 'the last item about a user decides',
    examples: [[{ id: EXAMPLE_USER_ID, metadata: { team: 'red' }, flags: 0 }]],
  },
)
export const MessageDoc = t.Object(
  {
    content: t.String({ minLength: 1, maxLength: MAX_CONTENT_CHARS }),
    metadata: MetadataDoc,
    flags: t.Optional(
      t.Nullable(Int({ minimum: 0, maximum: 2 ** 31 - 1 }), {
        description: 'bit field: 4 SUPPRESS_EMBEDS, 4096 SUPPRESS_NOTIFICATIONS (others ignored)',
      }),
    ),
    nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), Int()])),
    tts: t.Optional(t.Boolean()),
    enforce_nonce: t.Optional(
      t.Boolean({ description: 'a retry with the same nonce within 5 minutes answers the original message (200)' }),
    ),
  },
  { examples: [{ content: 'gg', metadata: { kind: 'chat' }, nonce: '1234567890', enforce_nonce: true }] },
)
export const LinkDoc = t.Optional(
  t.Object(
    {
      channel_id: t.Optional(
        t.Nullable(t.String({ pattern: SNOWFLAKE, description: 'a guild text channel; null or absent unlinks' })),
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
    voice_states: t.Optional(t.Array(LobbyVoiceState, { description: 'the members in the call (user sessions only)' })),
  },
  { description: 'Lobby' },
)
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

/** PUT .../moderation-metadata: the body is the map itself (judged by FormCheck.moderationMetadata). */
export const ModerationMetadataDoc = t.Record(
  t.String({ maxLength: MODERATION_METADATA_KEY_CHARS }),
  t.String({ maxLength: MODERATION_METADATA_VALUE_CHARS }),
  {
    maxProperties: MODERATION_METADATA_KEYS,
    description: `string keys and values: at most ${MODERATION_METADATA_KEYS} keys, keys up to ${MODERATION_METADATA_KEY_CHARS} characters, values up to ${MODERATION_METADATA_VALUE_CHARS}; replaces what the message had ({} clears it)`,
    examples: [{ verdict: 'allowed', toxicity: '0.02' }],
  },
)
