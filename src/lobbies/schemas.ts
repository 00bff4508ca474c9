// TypeBox schemas of the lobby endpoints. Metadata maps are t.Unknown here and checked by FormCheck (validate.ts),
// which reports key count and key/value length the way Discord's form errors do.
import { t } from 'elysia'
import { queryString } from '../http/form'
import {
  IDLE_TIMEOUT_MAX,
  IDLE_TIMEOUT_MIN,
  LOBBY_FLAGS_ALL,
  MAX_CONTENT_CHARS,
  MAX_MEMBERS_PER_REQUEST,
  MAX_SECRET_CHARS,
  MEMBER_FLAGS_ALL,
  MESSAGES_MAX_LIMIT,
} from './limits'

const Snowflake = t.String({ pattern: '^[0-9]{1,20}$' })
// The examples are what the API docs offer to send: values the server accepts.
const Metadata = t.Optional(t.Unknown({ description: 'object of string keys and values, or null', examples: [{ mode: 'ranked' }] }))
// Nullable integers are checked by FormCheck.int (bounds below) so the error names the bound.
const IdleTimeout = t.Optional(t.Unknown({ description: `integer ${IDLE_TIMEOUT_MIN}-${IDLE_TIMEOUT_MAX} or null`, examples: [300] }))
const LobbyFlags = t.Optional(t.Unknown({ description: `integer bit field (max ${LOBBY_FLAGS_ALL}) or null`, examples: [0] }))
const MemberFlags = t.Optional(t.Unknown({ description: `integer bit field (max ${MEMBER_FLAGS_ALL}) or null`, examples: [0] }))

export const MemberSchema = t.Object({ id: Snowflake, metadata: Metadata, flags: MemberFlags })

export const CreateLobbySchema = t.Object({
  metadata: Metadata,
  members: t.Optional(t.Array(MemberSchema, { maxItems: MAX_MEMBERS_PER_REQUEST, examples: [[]] })),
  idle_timeout_seconds: IdleTimeout,
  flags: LobbyFlags,
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
})

export const BulkSchema = t.Array(
  t.Object({ id: Snowflake, metadata: Metadata, flags: MemberFlags, remove_member: t.Optional(t.Unknown({ description: 'boolean or null' })) }),
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

export const LinkSchema = t.Optional(t.Object({ channel_id: t.Optional(t.Unknown({ description: 'snowflake or null' })) }))

// ---- answers (documentation)

const LobbyMember = t.Object({ id: Snowflake, metadata: t.Nullable(t.Record(t.String(), t.String())), flags: t.Integer() }, { description: 'Lobby member' })

export const LobbyAnswer = t.Object(
  {
    id: Snowflake,
    application_id: Snowflake,
    metadata: t.Nullable(t.Record(t.String(), t.String())),
    members: t.Array(LobbyMember),
    flags: t.Integer(),
    linked_channel: t.Optional(t.Unknown({ description: 'the linked guild channel' })),
  },
  { description: 'Lobby' },
)
export const LobbyMemberAnswer = LobbyMember
export const LobbyMembersAnswer = t.Array(LobbyMember, { description: 'The upserted members' })
export const LobbyMessageAnswer = t.Object(
  {
    id: Snowflake,
    type: t.Integer(),
    content: t.String(),
    lobby_id: Snowflake,
    channel_id: Snowflake,
    author: t.Unknown({ description: 'user' }),
    metadata: t.Optional(t.Record(t.String(), t.String())),
    flags: t.Integer(),
    application_id: Snowflake,
    timestamp: t.String({ format: 'date-time' }),
    nonce: t.Optional(t.Union([t.String(), t.Integer()])),
  },
  { description: 'Lobby message' },
)
export const LobbyMessagesAnswer = t.Array(LobbyMessageAnswer, { description: 'Messages, newest first' })
export const LobbyInviteAnswer = t.Object({ code: t.String() }, { description: 'The invite code' })
