// TypeBox schemas of the guild model: request bodies and queries (input types derived from them) and the answers
// documented in /api/docs.
import { t } from 'elysia'
import { PublicUser } from '../accounts/schemas'
import { ChannelType } from '../core/discord'
import { Int } from '../http/docs'
import { queryString } from '../http/form'
import { NullableInt, NullableString, Refine, Snowflake as SnowflakeField } from '../http/validation'
import { embedUrlProblem, timestampProblem } from './embed-fields'
import {
  BULK_DELETE_MAX,
  BULK_DELETE_MIN,
  MAX_CONTENT_CHARS,
  MAX_EMBED_AUTHOR,
  MAX_EMBED_DESCRIPTION,
  MAX_EMBED_FIELD_NAME,
  MAX_EMBED_FIELD_VALUE,
  MAX_EMBED_FIELDS,
  MAX_EMBED_FOOTER,
  MAX_EMBED_TEXT,
  MAX_ROLES,
  MAX_CHANNELS_MOVED,
  MAX_TIMEOUT_DAYS,
  MAX_ALLOWED_MENTIONS,
  MAX_BAN_DELETE_DAYS,
  MAX_BAN_DELETE_SECONDS,
  MAX_BANS_PAGE,
  MAX_MEMBER_SEARCH,
  MAX_NICK_CHARS,
  MAX_PINS_PAGE,
  MAX_EMBED_TITLE,
  MAX_EMBED_URL,
  MAX_EMBEDS,
  REACTIONS_DEFAULT_LIMIT,
  REACTIONS_MAX_LIMIT,
} from './limits'

const Snowflake = t.String({ pattern: '^\\d{1,20}$' })
const Timestamp = t.String({ format: 'date-time' })

export const CreateGuildSchema = t.Object(
  { name: t.String({ minLength: 2, maxLength: 100 }) },
  { examples: [{ name: 'Lobby regulars' }] },
)
export const PatchGuildSchema = t.Object(
  { name: t.Optional(t.String({ minLength: 2, maxLength: 100 })) },
  { examples: [{ name: 'Lobby regulars (EU)' }] },
)
export const MyGuildsQuery = t.Object({
  limit: queryString('integer 1-200, default 200'),
  before: queryString('snowflake'),
  after: queryString('snowflake'),
})
export const MemberSearchQuery = t.Object({
  query: t.String({ description: 'the start of a username or nickname (any case)' }),
  limit: queryString(`integer 1-${MAX_MEMBER_SEARCH}, default 1`),
})
export const MembersQuery = t.Object({
  limit: queryString('integer 1-1000, default 1'),
  after: queryString('snowflake'),
})

export const MemberEditSchema = t.Object(
  {
    nick: t.Optional(NullableString(MAX_NICK_CHARS, { description: 'the nickname; empty or null removes it' })),
    roles: t.Optional(
      t.Array(SnowflakeField({ description: 'a role id' }), {
        maxItems: MAX_ROLES,
        description: "the whole role list (MANAGE_ROLES; the roles added or removed below the caller's highest)",
      }),
    ),
    communication_disabled_until: t.Optional(
      NullableString(64, {
        description: `a timeout until this ISO 8601 time, at most ${MAX_TIMEOUT_DAYS} days ahead (MODERATE_MEMBERS); null ends it`,
      }),
    ),
  },
  { examples: [{ nick: 'Captain', roles: ['1234567890123456789'] }] },
)
export type MemberEditInput = typeof MemberEditSchema.static

export const MemberEditMeSchema = t.Object(
  { nick: MemberEditSchema.properties.nick },
  { examples: [{ nick: 'Helper' }] },
)

export const BanSchema = t.Object(
  {
    delete_message_seconds: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: MAX_BAN_DELETE_SECONDS,
        description: "delete the user's messages this far back",
      }),
    ),
    delete_message_days: t.Optional(
      t.Integer({ minimum: 0, maximum: MAX_BAN_DELETE_DAYS, description: 'the same in days (deprecated by Discord)' }),
    ),
  },
  { examples: [{ delete_message_seconds: 3600 }] },
)
export type BanInput = typeof BanSchema.static
export const BansQuery = t.Object({
  limit: queryString(`integer 1-${MAX_BANS_PAGE}, default ${MAX_BANS_PAGE}`),
  before: queryString('user id'),
  after: queryString('user id'),
})

export const RoleSchema = t.Object(
  {
    name: t.Optional(t.String({ minLength: 1, maxLength: 100 })),
    permissions: t.Optional(t.String({ maxLength: 20, description: 'permission bit set as a decimal string' })),
    color: t.Optional(t.Integer({ minimum: 0, maximum: 0xffffff })),
    hoist: t.Optional(t.Boolean()),
    mentionable: t.Optional(t.Boolean()),
  },
  // MANAGE_MESSAGES | KICK_MEMBERS
  { examples: [{ name: 'Moderators', permissions: '8194', color: 3447003, hoist: true, mentionable: true }] },
)
export type RoleInput = typeof RoleSchema.static

/** Modify Guild Role Positions: the roles to move and where (1 is just above @everyone). */
export const RolePositionsSchema = t.Array(
  t.Object({
    id: SnowflakeField({ description: 'a role id' }),
    position: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
  }),
  { maxItems: MAX_ROLES, examples: [[{ id: '1234567890123456789', position: 2 }]] },
)
export type RolePositionsInput = typeof RolePositionsSchema.static

const channelFields = {
  name: t.String({ minLength: 1, maxLength: 100 }),
  type: t.Optional(t.Union([t.Literal(ChannelType.GUILD_TEXT), t.Literal(ChannelType.GUILD_VOICE)])),
  topic: t.Optional(t.Nullable(t.String({ maxLength: 1024 }))),
  position: t.Optional(t.Integer({ minimum: 0, maximum: 10000 })),
  nsfw: t.Optional(t.Boolean()),
}
export const CreateChannelSchema = t.Object(channelFields, {
  examples: [
    { name: 'strategy', type: ChannelType.GUILD_TEXT, topic: 'Plans for the next match', position: 2, nsfw: false },
  ],
})
export type CreateChannelInput = typeof CreateChannelSchema.static
/** A channel's type cannot change. */
export const PatchChannelSchema = t.Object(
  {
    ...channelFields,
    name: t.Optional(channelFields.name),
    type: t.Optional(t.Never({ description: 'cannot change' })),
  },
  { examples: [{ name: 'strategy-eu', topic: 'Plans for the EU league' }] },
)
export type PatchChannelInput = typeof PatchChannelSchema.static
/** Modify Guild Channel Positions: the channels to move and their new sorting positions. */
export const ChannelPositionsSchema = t.Array(
  t.Object({
    id: SnowflakeField({ description: 'a channel id' }),
    position: t.Optional(t.Union([channelFields.position, t.Null()])),
    lock_permissions: t.Optional(t.Union([t.Boolean(), t.Null()], { description: 'passed over (no overwrites)' })),
    parent_id: t.Optional(t.Null({ description: 'no categories: null only' })),
  }),
  { maxItems: MAX_CHANNELS_MOVED, examples: [[{ id: '1234567890123456789', position: 0 }]] },
)
export type ChannelPositionsInput = typeof ChannelPositionsSchema.static

// Embeds as bots send them, each field with Discord's limit; an unset field may come as null. What concerns a
// message's embeds together (6000 characters) embeds.ts judges.
const EmbedUrl = t.Optional(Refine('EmbedUrl', NullableString(MAX_EMBED_URL), embedUrlProblem))
const EmbedMedia = t.Optional(
  t.Nullable(t.Object({ url: Refine('EmbedMediaUrl', t.String({ maxLength: MAX_EMBED_URL }), embedUrlProblem) })),
)
const EmbedText = (name: string, max: number) =>
  Refine(name, t.String({ maxLength: max, description: 'not empty' }), (value) =>
    value ? undefined : { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' },
  )
export const EmbedSchema = t.Object({
  type: t.Optional(NullableString(64, { description: 'stored as "rich"' })),
  title: t.Optional(NullableString(MAX_EMBED_TITLE)),
  description: t.Optional(NullableString(MAX_EMBED_DESCRIPTION)),
  url: EmbedUrl,
  timestamp: t.Optional(Refine('EmbedTimestamp', NullableString(64, { description: 'ISO 8601' }), timestampProblem)),
  color: t.Optional(NullableInt(0, 0xffffff)),
  footer: t.Optional(t.Nullable(t.Object({ text: t.String({ maxLength: MAX_EMBED_FOOTER }), icon_url: EmbedUrl }))),
  image: EmbedMedia,
  thumbnail: EmbedMedia,
  author: t.Optional(
    t.Nullable(t.Object({ name: t.String({ maxLength: MAX_EMBED_AUTHOR }), url: EmbedUrl, icon_url: EmbedUrl })),
  ),
  fields: t.Optional(
    t.Nullable(
      t.Array(
        t.Object({
          name: EmbedText('EmbedFieldName', MAX_EMBED_FIELD_NAME),
          value: EmbedText('EmbedFieldValue', MAX_EMBED_FIELD_VALUE),
          inline: t.Optional(t.Nullable(t.Boolean())),
        }),
        { maxItems: MAX_EMBED_FIELDS },
      ),
    ),
  ),
})
export type EmbedInput = typeof EmbedSchema.static
const Content = t.Optional(NullableString(MAX_CONTENT_CHARS))
const Embeds = t.Optional(
  t.Nullable(t.Array(EmbedSchema, { maxItems: MAX_EMBEDS }), {
    description: `at most ${MAX_EMBED_TEXT} characters of text in all; null: none`,
  }),
)

/** A message has content or embeds (50006 otherwise: messages.ts). */
/** Which mentions of the content count (Discord's allowed mentions): absent, every kind. */
const AllowedMentionsSchema = t.Object(
  {
    parse: t.Optional(
      t.Array(t.Union([t.Literal('users'), t.Literal('roles'), t.Literal('everyone')]), {
        maxItems: 3,
        description: 'the kinds parsed whole',
      }),
    ),
    users: t.Optional(t.Array(SnowflakeField(), { maxItems: MAX_ALLOWED_MENTIONS, description: 'users that count' })),
    roles: t.Optional(t.Array(SnowflakeField(), { maxItems: MAX_ALLOWED_MENTIONS, description: 'roles that count' })),
    replied_user: t.Optional(t.Boolean({ description: 'a reply mentions the author replied to' })),
  },
  { description: 'Which mentions count (absent: all of them)' },
)
export type AllowedMentionsInput = typeof AllowedMentionsSchema.static

/** A reply: the message replied to, in the same channel (Discord's type 0, DEFAULT; forwards are not kept). */
const MessageReferenceSchema = t.Object(
  {
    type: t.Optional(t.Literal(0, { description: '0: a reply (forwards, 1, are not supported)' })),
    message_id: SnowflakeField({ description: 'the message replied to' }),
    channel_id: t.Optional(SnowflakeField({ description: 'its channel: this one' })),
    guild_id: t.Optional(SnowflakeField({ description: "its guild: this channel's" })),
    fail_if_not_exists: t.Optional(
      t.Boolean({ description: 'true (the default): 50035 when the message is not here; false: sent as no reply' }),
    ),
  },
  { description: 'Reply to a message of this channel' },
)

export const MessageSchema = t.Object(
  {
    content: Content,
    embeds: Embeds,
    nonce: t.Optional(t.Union([t.String({ maxLength: 25 }), t.Integer()])),
    enforce_nonce: t.Optional(
      t.Boolean({ description: 'a retry with the same nonce within minutes answers the original message' }),
    ),
    message_reference: t.Optional(MessageReferenceSchema),
    allowed_mentions: t.Optional(AllowedMentionsSchema),
  },
  {
    examples: [
      { content: 'Ready when you are', nonce: '1234567890', enforce_nonce: true },
      { content: 'Agreed', message_reference: { message_id: '1234567890123456789', fail_if_not_exists: false } },
      {
        content: null,
        embeds: [
          {
            title: 'Match found',
            description: 'Two teams of five',
            color: 5793266,
            fields: [{ name: 'Map', value: 'Harbour', inline: true }],
            footer: { text: 'Lobby 7' },
            timestamp: '2025-01-01T12:00:00.000Z',
          },
        ],
      },
    ],
  },
)
export type MessageInput = typeof MessageSchema.static
/** Only the author edits content and embeds; null clears one (the message may not end up empty). */
export const MessageEditSchema = t.Object(
  { content: Content, embeds: Embeds, allowed_mentions: t.Optional(AllowedMentionsSchema) },
  { examples: [{ content: 'Ready in five minutes' }] },
)
export type MessageEditInput = typeof MessageEditSchema.static
export const BulkDeleteSchema = t.Object(
  {
    messages: t.Array(SnowflakeField({ description: 'a message id' }), {
      minItems: BULK_DELETE_MIN,
      maxItems: BULK_DELETE_MAX,
    }),
  },
  { examples: [{ messages: ['1234567890123456789', '1234567890123456790'] }] },
)
export const ReactionsQuery = t.Object({
  limit: queryString(`integer 1-${REACTIONS_MAX_LIMIT}, default ${REACTIONS_DEFAULT_LIMIT}`),
  after: queryString('user id'),
})
export const PinsQuery = t.Object({
  before: queryString('ISO 8601 timestamp: pins made before it'),
  limit: queryString(`integer 1-${MAX_PINS_PAGE}, default ${MAX_PINS_PAGE}`),
})
export const MessagesQuery = t.Object({
  limit: queryString('integer 1-100, default 50'),
  before: queryString('snowflake'),
  after: queryString('snowflake'),
  around: queryString('snowflake'),
})

export const InviteSchema = t.Optional(
  t.Object(
    {
      max_age: t.Optional(t.Integer({ minimum: 0, maximum: 604800 })),
      max_uses: t.Optional(t.Integer({ minimum: 0, maximum: 100 })),
      unique: t.Optional(t.Boolean()),
      temporary: t.Optional(t.Boolean()),
      target_type: t.Optional(t.Integer({ minimum: 1, maximum: 2 })),
      target_user_id: t.Optional(t.Nullable(SnowflakeField({ description: 'the user a stream invite is for' }))),
    },
    { examples: [{ max_age: 86400, max_uses: 10, unique: true, temporary: false }] },
  ),
)

// ---- answers (documentation)

const NULL = (description?: string) => t.Null(description ? { description } : {})
const always = (what: string) => `always ${what} here`

export const Role = t.Object(
  {
    id: Snowflake,
    name: t.String(),
    color: Int(),
    colors: t.Object(
      { primary_color: Int(), secondary_color: NULL(), tertiary_color: NULL() },
      { description: 'primary_color is `color`; no gradient here' },
    ),
    hoist: t.Boolean(),
    icon: NULL(),
    unicode_emoji: NULL(),
    position: Int(),
    permissions: t.String({ description: 'bit set as a decimal string' }),
    managed: t.Boolean({ description: "true for the role a bot got when it was added (OAuth2's bot scope)" }),
    mentionable: t.Boolean(),
    flags: Int(),
    tags: t.Optional(
      t.Object({ bot_id: Snowflake }, { description: 'a managed role: the bot it belongs to (only then present)' }),
    ),
  },
  { description: 'Role' },
)

const Overwrite = t.Object({ id: Snowflake, type: Int(), allow: t.String(), deny: t.String() })

export const DmChannel = t.Object(
  {
    id: Snowflake,
    type: t.Literal(1),
    last_message_id: t.Nullable(Snowflake),
    flags: Int(),
    recipients: t.Array(PublicUser, { description: 'the other user of the DM' }),
  },
  { description: 'A DM channel (type 1)' },
)

export const Channel = t.Object(
  {
    id: Snowflake,
    type: Int({ description: '0 text, 2 voice' }),
    guild_id: Snowflake,
    name: t.String(),
    position: Int(),
    permission_overwrites: t.Array(Overwrite, { description: always('empty') }),
    parent_id: NULL(),
    nsfw: t.Boolean(),
    topic: t.Optional(t.Nullable(t.String(), { description: 'text channels' })),
    last_message_id: t.Optional(t.Nullable(Snowflake, { description: 'text channels' })),
    rate_limit_per_user: t.Optional(Int({ description: `text channels; ${always('0')}` })),
    bitrate: t.Optional(Int({ description: 'voice channels' })),
    user_limit: t.Optional(Int({ description: 'voice channels' })),
    rtc_region: t.Optional(NULL('voice channels')),
    flags: Int(),
  },
  { description: 'Channel' },
)

export const Guild = t.Object(
  {
    id: Snowflake,
    name: t.String(),
    icon: NULL(),
    description: NULL(),
    owner_id: Snowflake,
    features: t.Array(t.String()),
    vanity_url_code: t.Nullable(t.String()),
    hub_type: t.Nullable(Int()),
    member_count: Int(),
    roles: t.Array(Role),
    verification_level: Int(),
    default_message_notifications: Int(),
    explicit_content_filter: Int(),
    mfa_level: Int(),
    premium_tier: Int(),
    nsfw_level: Int(),
    preferred_locale: t.String(),
    splash: NULL(),
    discovery_splash: NULL(),
    banner: NULL(),
    afk_channel_id: NULL(),
    afk_timeout: Int({ description: 'always 300' }),
    application_id: NULL(),
    system_channel_id: NULL(),
    system_channel_flags: Int({ description: 'always 0' }),
    rules_channel_id: NULL(),
    public_updates_channel_id: NULL(),
    safety_alerts_channel_id: NULL(),
    premium_subscription_count: Int({ description: 'always 0' }),
    premium_progress_bar_enabled: t.Boolean(),
    emojis: t.Array(t.Object({}), { description: 'always empty (no custom emoji)' }),
    stickers: t.Array(t.Object({}), { description: 'always empty' }),
  },
  { description: 'Guild' },
)

export const PartialGuilds = t.Array(
  t.Object({
    id: Snowflake,
    name: t.String(),
    icon: NULL(),
    banner: NULL(),
    owner: t.Boolean(),
    permissions: t.String(),
    features: t.Array(t.String()),
  }),
  { description: "The caller's guilds, in id order" },
)

export const Member = t.Object(
  {
    user: t.Nullable(PublicUser),
    nick: t.Nullable(t.String()),
    avatar: NULL(),
    roles: t.Array(Snowflake),
    joined_at: Timestamp,
    premium_since: NULL(),
    deaf: t.Boolean(),
    mute: t.Boolean(),
    flags: Int(),
    pending: t.Boolean(),
    communication_disabled_until: t.Nullable(Timestamp, {
      description: 'the end of its timeout (null, or past: not timed out)',
    }),
  },
  { description: 'Member' },
)

const Url = t.String()
export const Embed = t.Object(
  {
    type: t.Literal('rich'),
    title: t.Optional(t.String()),
    description: t.Optional(t.String()),
    url: t.Optional(Url),
    timestamp: t.Optional(Timestamp),
    color: t.Optional(Int()),
    footer: t.Optional(t.Object({ text: t.String(), icon_url: t.Optional(Url) })),
    image: t.Optional(t.Object({ url: Url })),
    thumbnail: t.Optional(t.Object({ url: Url })),
    author: t.Optional(t.Object({ name: t.String(), url: t.Optional(Url), icon_url: t.Optional(Url) })),
    fields: t.Optional(t.Array(t.Object({ name: t.String(), value: t.String(), inline: t.Boolean() }))),
  },
  { description: 'Embed (rich)' },
)

export const Reaction = t.Object(
  {
    emoji: t.Object({ id: NULL(always('null: unicode emoji')), name: t.String() }),
    count: Int(),
    count_details: t.Object({ burst: Int({ description: always('0') }), normal: Int() }),
    burst_colors: t.Array(t.String(), { description: always('empty') }),
    me_burst: t.Boolean({ description: always('false') }),
    me: t.Boolean({ description: 'whether the caller reacted so' }),
  },
  { description: 'Reaction' },
)

const MessageFields = {
  id: Snowflake,
  type: Int({ description: '0, or 19 for a reply' }),
  content: t.String(),
  channel_id: Snowflake,
  guild_id: t.Optional(SnowflakeField({ description: 'absent in a DM' })),
  author: t.Nullable(PublicUser),
  attachments: t.Array(t.Object({}), { description: always('empty') }),
  embeds: t.Array(Embed),
  mentions: t.Array(PublicUser, {
    description: 'the users it mentions (in Gateway events, each with its `member` while in the guild)',
  }),
  mention_roles: t.Array(Snowflake, { description: 'the roles it mentions' }),
  mention_everyone: t.Boolean(),
  pinned: t.Boolean(),
  tts: t.Boolean(),
  timestamp: Timestamp,
  edited_timestamp: t.Nullable(Timestamp),
  flags: Int(),
  components: t.Array(t.Object({}), { description: always('empty') }),
  reactions: t.Optional(t.Array(Reaction, { description: 'absent without reactions; `me` is the caller' })),
  nonce: t.Optional(t.Union([t.String(), Int()])),
  message_reference: t.Optional(
    t.Object(
      { type: t.Literal(0), message_id: Snowflake, channel_id: Snowflake, guild_id: t.Optional(Snowflake) },
      { description: 'a reply: the message replied to' },
    ),
  ),
}
export const Message = t.Object(
  {
    ...MessageFields,
    referenced_message: t.Optional(
      t.Nullable(t.Object(MessageFields, { description: 'the message replied to (null once deleted)' })),
    ),
  },
  { description: 'Message' },
)

export const Ban = t.Object(
  { reason: t.Nullable(t.String()), user: PublicUser },
  { description: 'A ban: the user and the X-Audit-Log-Reason it was made with' },
)

export const PinsPage = t.Object(
  {
    items: t.Array(t.Object({ pinned_at: Timestamp, message: Message })),
    has_more: t.Boolean({ description: 'older pins remain (ask again with `before` the last `pinned_at`)' }),
  },
  { description: 'Pins, the latest pinned first (none without READ_MESSAGE_HISTORY)' },
)

export const Invite = t.Object(
  {
    code: t.String(),
    type: Int({ description: '0: a guild invite' }),
    guild: t.Object({
      id: Snowflake,
      name: t.String(),
      icon: NULL(),
      features: t.Array(t.String()),
      vanity_url_code: t.Nullable(t.String()),
    }),
    guild_id: Snowflake,
    channel: t.Object({ id: Snowflake, name: t.String(), type: Int() }),
    inviter: t.Optional(PublicUser),
    target_type: t.Optional(Int({ description: '1: for one user (target_user)' })),
    target_user: t.Optional(PublicUser),
    uses: Int(),
    max_uses: Int(),
    max_age: Int(),
    temporary: t.Boolean(),
    created_at: Timestamp,
    expires_at: t.Nullable(Timestamp),
    approximate_member_count: Int(),
    new_member: t.Optional(t.Boolean({ description: 'accepting: whether the caller joined now' })),
  },
  { description: 'Invite' },
)
