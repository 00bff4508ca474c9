// Discord's limits on channel messages, embeds, pins and reactions, and on members.
export const MAX_CONTENT_CHARS = 2000
/** Embeds: per message, and the characters of their titles, descriptions, fields, footers and authors together. */
export const MAX_EMBEDS = 10
export const MAX_EMBED_TEXT = 6000
export const MAX_EMBED_TITLE = 256
export const MAX_EMBED_DESCRIPTION = 4096
export const MAX_EMBED_FIELDS = 25
export const MAX_EMBED_FIELD_NAME = 256
export const MAX_EMBED_FIELD_VALUE = 1024
export const MAX_EMBED_FOOTER = 2048
export const MAX_EMBED_AUTHOR = 256
export const MAX_EMBED_URL = 2048
/** Bulk deletion: 2 to 100 messages, each under 14 days old. */
export const BULK_DELETE_MIN = 2
export const BULK_DELETE_MAX = 100
export const BULK_DELETE_MAX_AGE_MS = 14 * 24 * 3600_000
export const MAX_PINS = 50
/** GET /channels/{id}/messages/pins: its `limit`'s maximum and default. */
export const MAX_PINS_PAGE = 50
/** Different emoji on one message. */
export const MAX_REACTION_EMOJI = 20
export const REACTIONS_DEFAULT_LIMIT = 25
export const REACTIONS_MAX_LIMIT = 100
/** A member's nickname (empty or null: none). */
export const MAX_NICK_CHARS = 32
/** Channels in one PATCH /guilds/{id}/channels (a guild holds at most 500). */
export const MAX_CHANNELS_MOVED = 500
/** A timeout (communication_disabled_until) reaches this far ahead at most. */
export const MAX_TIMEOUT_DAYS = 28
/** Roles in one list sent (a member's, or the positions to change): a guild holds at most 250. */
export const MAX_ROLES = 250
/** GET /guilds/{id}/members/search: its `limit`'s maximum. */
export const MAX_MEMBER_SEARCH = 1000
/** Bans: the audit-log reason kept, the messages deleted with them (up to 7 days back), the page of GET /bans. */
export const MAX_BAN_REASON = 512
export const MAX_BAN_DELETE_SECONDS = 7 * 86_400
export const MAX_BAN_DELETE_DAYS = 7
export const MAX_BANS_PAGE = 1000
/** allowed_mentions: the users and the roles it may name. */
export const MAX_ALLOWED_MENTIONS = 100
