// Discord's permission bits and how a member's permissions are computed: the OR of @everyone and the member's
// roles; the owner and ADMINISTRATOR have every permission. (No channel overwrites in this model.)

export const P = {
  CREATE_INSTANT_INVITE: 1n << 0n,
  KICK_MEMBERS: 1n << 1n,
  BAN_MEMBERS: 1n << 2n,
  ADMINISTRATOR: 1n << 3n,
  MANAGE_CHANNELS: 1n << 4n,
  MANAGE_GUILD: 1n << 5n,
  ADD_REACTIONS: 1n << 6n,
  VIEW_AUDIT_LOG: 1n << 7n,
  PRIORITY_SPEAKER: 1n << 8n,
  STREAM: 1n << 9n,
  VIEW_CHANNEL: 1n << 10n,
  SEND_MESSAGES: 1n << 11n,
  SEND_TTS_MESSAGES: 1n << 12n,
  MANAGE_MESSAGES: 1n << 13n,
  EMBED_LINKS: 1n << 14n,
  ATTACH_FILES: 1n << 15n,
  READ_MESSAGE_HISTORY: 1n << 16n,
  MENTION_EVERYONE: 1n << 17n,
  USE_EXTERNAL_EMOJIS: 1n << 18n,
  VIEW_GUILD_INSIGHTS: 1n << 19n,
  CONNECT: 1n << 20n,
  SPEAK: 1n << 21n,
  MUTE_MEMBERS: 1n << 22n,
  DEAFEN_MEMBERS: 1n << 23n,
  MOVE_MEMBERS: 1n << 24n,
  USE_VAD: 1n << 25n,
  CHANGE_NICKNAME: 1n << 26n,
  MANAGE_NICKNAMES: 1n << 27n,
  MANAGE_ROLES: 1n << 28n,
  MANAGE_WEBHOOKS: 1n << 29n,
} as const

/** Every bit Discord defines today (through 1 << 50). */
export const ALL_PERMISSIONS = (1n << 51n) - 1n

/** What a new guild's @everyone role may do (Discord's defaults for a fresh server). */
export const DEFAULT_EVERYONE =
  P.CREATE_INSTANT_INVITE | P.ADD_REACTIONS | P.STREAM | P.VIEW_CHANNEL | P.SEND_MESSAGES | P.EMBED_LINKS |
  P.ATTACH_FILES | P.READ_MESSAGE_HISTORY | P.MENTION_EVERYONE | P.USE_EXTERNAL_EMOJIS | P.CONNECT | P.SPEAK |
  P.USE_VAD | P.CHANGE_NICKNAME

export function computePermissions(input: { isOwner: boolean; everyone: bigint; roles: bigint[] }): bigint {
  if (input.isOwner) return ALL_PERMISSIONS
  const combined = input.roles.reduce((acc, bits) => acc | bits, input.everyone)
  return combined & P.ADMINISTRATOR ? ALL_PERMISSIONS : combined
}

export function has(permissions: bigint, needed: bigint): boolean {
  return (permissions & needed) === needed
}

/** Parse a permission string from a request; null when it is not a non-negative integer within the known bits. */
export function parsePermissions(value: string): bigint | null {
  if (!/^\d{1,20}$/.test(value)) return null
  const bits = BigInt(value)
  return bits & ~ALL_PERMISSIONS ? null : bits
}
