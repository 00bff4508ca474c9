// Discord's permission bits and how a member's permissions are computed: the OR of @everyone and the member's
// roles; the owner and ADMINISTRATOR have every permission. (No channel overwrites in this model.) The bits are
// Discord's, in core/discord.ts.
import { ALL_PERMISSIONS, Permission } from '../core/discord'

/** What a new guild's @everyone role may do (Discord's defaults for a fresh server). */
export const DEFAULT_EVERYONE =
  Permission.CREATE_INSTANT_INVITE |
  Permission.ADD_REACTIONS |
  Permission.STREAM |
  Permission.VIEW_CHANNEL |
  Permission.SEND_MESSAGES |
  Permission.EMBED_LINKS |
  Permission.ATTACH_FILES |
  Permission.READ_MESSAGE_HISTORY |
  Permission.MENTION_EVERYONE |
  Permission.USE_EXTERNAL_EMOJIS |
  Permission.CONNECT |
  Permission.SPEAK |
  Permission.USE_VAD |
  Permission.CHANGE_NICKNAME

export function computePermissions(input: {
  isOwner: boolean
  everyone: bigint
  roles: bigint[]
  timedOut?: boolean
}): bigint {
  if (input.isOwner) return ALL_PERMISSIONS
  const combined = input.roles.reduce((acc, bits) => acc | bits, input.everyone)
  if (combined & Permission.ADMINISTRATOR) return ALL_PERMISSIONS
  // A member timed out keeps only reading, as Discord's (administrators are never timed out).
  return input.timedOut ? combined & (Permission.VIEW_CHANNEL | Permission.READ_MESSAGE_HISTORY) : combined
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
