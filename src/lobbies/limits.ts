// Limits of spec §8 and WIRE.md §1.
export const MAX_MEMBERS_PER_LOBBY = 1000
export const MAX_MEMBERS_PER_REQUEST = 25
export const MAX_LOBBIES_PER_USER_PER_APP = 100
export const MAX_METADATA_KEYS = 25
export const MAX_METADATA_CHARS = 1024
export const MAX_SECRET_CHARS = 250
export const SECRET_LIFETIME_MS = 30 * 24 * 3600 * 1000
export const IDLE_TIMEOUT_MIN = 5
export const IDLE_TIMEOUT_MAX = 604800
export const IDLE_TIMEOUT_DEFAULT = 300
export const MAX_CONTENT_CHARS = 4000
/** `override_event_webhooks_url` (POST/PATCH /lobbies): at most this many characters, as Discord's URL fields. */
export const MAX_WEBHOOK_URL_CHARS = 2048
export const MESSAGES_DEFAULT_LIMIT = 50
export const MESSAGES_MAX_LIMIT = 200
/** GET /users/@me/lobbies: the newest this many (a user is in at most 100 of one application's). */
export const USER_LOBBIES_LISTED = 100
/** PUT .../moderation-metadata (WIRE.md §1): at most 5 keys, keys up to 1024 characters, values up to 2000. */
export const MODERATION_METADATA_KEYS = 5
export const MODERATION_METADATA_KEY_CHARS = 1024
export const MODERATION_METADATA_VALUE_CHARS = 2000

export const LobbyFlags = { REQUIRE_APPLICATION_AUTHORIZATION: 1 << 0 } as const
export const LobbyMemberFlags = { CAN_LINK_LOBBY: 1 << 0 } as const
export const LOBBY_FLAGS_ALL = LobbyFlags.REQUIRE_APPLICATION_AUTHORIZATION
export const MEMBER_FLAGS_ALL = LobbyMemberFlags.CAN_LINK_LOBBY
/** Message flags a client may set (SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS); others are ignored as Discord does. */
export const MESSAGE_FLAGS_ALLOWED = (1 << 2) | (1 << 12)
