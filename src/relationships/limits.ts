// The limits of relationships.

/** Discord's cap on friends (30002 past it), checked on both sides when a request is sent and when it is accepted. */
export const MAX_FRIENDS = 1000
/** Pending outgoing friend requests one user may have at once (this server's cap: Discord documents none). */
export const MAX_OUTGOING_REQUESTS = 1000
/** A friend's nickname (Discord's 1-32 characters). */
export const MAX_NICKNAME_CHARS = 32

export const RelationshipType = { FRIEND: 1, BLOCKED: 2, INCOMING_REQUEST: 3, OUTGOING_REQUEST: 4 } as const

/** Gateway op 3: Discord's 5 presence updates per 20 seconds per session (past it an update is dropped). */
export const PRESENCE_UPDATES_PER_WINDOW = 5
export const PRESENCE_WINDOW_MS = 20_000
/** Activities kept from one op 3. */
export const MAX_ACTIVITIES = 5

/** Game invites: how long one lives, in seconds (game-invite.mdx: 300-86400, default 900). */
export const GAME_INVITE_TTL = { min: 300, max: 86_400, default: 900 }
/** The Social SDK's ActivityActionTypes: an invite to join, and a request to join. */
export const InviteType = { JOIN: 1, JOIN_REQUEST: 5 } as const
/** A game invite's message (the SDK's SendActivityInvite content). */
export const MAX_INVITE_CONTENT = 1024
