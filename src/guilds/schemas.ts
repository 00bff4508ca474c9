// TypeBox schemas of the guild model: request bodies and queries (input types derived from them) and the answers
// documented in /api/docs.
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { ChannelType } from '../core/discord'
import { queryString } from '../http/form'

const Snowflake = t.String({ pattern: '^\\d{1,20}$' })
const Timestamp = t.String({ format: 'date-time' })

export const CreateGuildSchema = t.Object({ name: t.String({ minLength: 2, maxLength: 100 }) })
export const PatchGuildSchema = t.Object({ name: t.Optional(t.String({ minLength: 2, maxLength: 100 })) })
export const MyGuildsQuery = t.Object({ limit: queryString('integer 1-200, default 200'), before: queryString('snowflake'), after: queryString('snowflake') })
export const MembersQuery = t.Object({ limit: queryString('integer 1-1000, default 1'), after: queryString('snowflake') })

export const RoleSchema = t.Object({
  name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
  permissions: t.Optional(t.String({ maxLength: 20 })),
  color: t.Optional(t.Integer({ minimum: 0, maximum: 0xffffff })),
  hoist: t.Optional(t.Boolean()),
  mentionable: t.Optional(t.Boolean()),
})
export type RoleInput = typeof RoleSchema.static

const channelFields = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  type: t.Optional(t.Union([t.Literal(ChannelType.GUILD_TEXT), t.Literal(ChannelType.GUILD_VOICE)])),
  topic: t.Optional(t.Nullable(t.String({ maxLength: 1024 }))),
  position: t.Optional(t.Integer({ minimum: 0, maximum: 10000 })),
  nsfw: t.Optional(t.Boolean()),
}
export const CreateChannelSchema = t.Object(channelFields)
export type CreateChannelInput = typeof CreateChannelSchema.static
/** A channel's type cannot change. */
export const PatchChannelSchema = t.Object({ ...channelFields, name: t.Optional(channelFields.name), type: t.Optional(t.Never()) })
export type PatchChannelInput = typeof PatchChannelSchema.static

export const MessageSchema = t.Object({ content: t.String({ minLength: 1, maxLength: 2000 }), nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), t.Integer()])), enforce_nonce: t.Optional(t.Boolean()) })
export type MessageInput = typeof MessageSchema.static
export const MessagesQuery = t.Object({
  limit: queryString('integer 1-100, default 50'),
  before: queryString('snowflake'),
  after: queryString('snowflake'),
  around: queryString('snowflake'),
})

export const InviteSchema = t.Optional(
  t.Object({
    max_age: t.Optional(t.Integer({ minimum: 0, maximum: 604800 })),
    max_uses: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
    unique: t.Optional(t.Boolean()),
    temporary: t.Optional(t.Boolean()),
    target_type: t.Optional(t.Integer({ minimum: 1, maximum: 2 })),
    target_user_id: t.Optional(t.Nullable(Snowflake)),
  }),
)

// ---- answers (documentation)

export const Role = t.Object(
  {
    id: Snowflake,
    name: t.String(),
    color: t.Integer(),
    hoist: t.Boolean(),
    position: t.Integer(),
    permissions: t.String({ description: 'bit set as a decimal string' }),
    managed: t.Boolean(),
    mentionable: t.Boolean(),
    flags: t.Integer(),
  },
  { description: 'Role' },
)

export const Channel = t.Object(
  {
    id: Snowflake,
    type: t.Integer({ description: '0 text, 2 voice' }),
    guild_id: Snowflake,
    name: t.String(),
    position: t.Integer(),
    nsfw: t.Boolean(),
    topic: t.Optional(t.Nullable(t.String())),
    last_message_id: t.Optional(t.Nullable(Snowflake)),
    bitrate: t.Optional(t.Integer()),
  },
  { description: 'Channel' },
)

export const Guild = t.Object(
  {
    id: Snowflake,
    name: t.String(),
    owner_id: Snowflake,
    features: t.Array(t.String()),
    vanity_url_code: t.Nullable(t.String()),
    hub_type: t.Nullable(t.Integer()),
    member_count: t.Integer(),
    roles: t.Array(Role),
  },
  { description: 'Guild' },
)

export const PartialGuilds = t.Array(
  t.Object({ id: Snowflake, name: t.String(), owner: t.Boolean(), permissions: t.String(), features: t.Array(t.String()) }),
  { description: "The caller's guilds, in id order" },
)

export const Member = t.Object(
  { user: t.Nullable(PublicUser), nick: t.Nullable(t.String()), roles: t.Array(Snowflake), joined_at: Timestamp },
  { description: 'Member' },
)

export const Message = t.Object(
  {
    id: Snowflake,
    type: t.Integer(),
    content: t.String(),
    channel_id: Snowflake,
    guild_id: Snowflake,
    author: t.Nullable(PublicUser),
    timestamp: Timestamp,
    nonce: t.Optional(t.Union([t.String(), t.Integer()])),
  },
  { description: 'Message' },
)

export const Invite = t.Object(
  {
    code: t.String(),
    guild_id: Snowflake,
    channel: t.Object({ id: Snowflake, name: t.String(), type: t.Integer() }),
    inviter: t.Optional(PublicUser),
    target_user: t.Optional(PublicUser),
    uses: t.Integer(),
    max_uses: t.Integer(),
    max_age: t.Integer(),
    temporary: t.Boolean(),
    created_at: Timestamp,
    expires_at: t.Nullable(Timestamp),
    new_member: t.Optional(t.Boolean({ description: 'accepting: whether the caller joined now' })),
  },
  { description: 'Invite' },
)
