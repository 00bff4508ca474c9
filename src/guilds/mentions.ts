// Mentions, resolved as Discord resolves them when a message is sent or its content edited, and kept with it:
// `<@id>` and `<@!id>` (users that exist), `<@&id>` (the guild's roles that are mentionable, or any with
// MENTION_EVERYONE), `@everyone` and `@here` (with MENTION_EVERYONE); each kind only as `allowed_mentions` lets it
// (absent: every kind). A reply mentions the author replied to, unless `allowed_mentions` is given without
// `replied_user: true`.
import { findUsers } from '../accounts/store'
import { Permission } from '../core/discord'
import { formError } from '../core/errors'
import { has } from './permissions'
import type { AllowedMentionsInput } from './schemas'
import { cachedGuildRoles } from './store'
import type { Mentions } from './tables'

const USER = /<@!?(\d{1,20})>/g
const ROLE = /<@&(\d{1,20})>/g
const EVERYONE = /@(everyone|here)/

const ids = (content: string, pattern: RegExp) => [...new Set([...content.matchAll(pattern)].map((m) => m[1]!))]

/** Discord's rule: a kind is parsed whole or by its list of ids, not both. */
export function checkAllowedMentions(allowed: AllowedMentionsInput | undefined): void {
  for (const kind of ['users', 'roles'] as const)
    if (allowed?.parse?.includes(kind) && allowed[kind]?.length)
      throw formError({
        allowed_mentions: [
          'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
          `parse:["${kind}"] and ${kind}: [ids...] are mutually exclusive.`,
        ],
      })
}

export async function resolveMentions(
  guildId: string | null,
  permissions: bigint,
  content: string,
  allowed: AllowedMentionsInput | undefined,
  repliedAuthorId?: string,
): Promise<Mentions> {
  const may = (kind: 'users' | 'roles' | 'everyone', id?: string) =>
    allowed === undefined ||
    allowed.parse?.includes(kind) === true ||
    (kind !== 'everyone' && id !== undefined && allowed[kind]?.includes(id) === true)
  const userIds = ids(content, USER).filter((id) => may('users', id))
  if (repliedAuthorId && (allowed === undefined || allowed.replied_user === true) && !userIds.includes(repliedAuthorId))
    userIds.push(repliedAuthorId)
  const users = userIds.length ? await findUsers(userIds) : new Map()
  // A DM (no guild) has neither roles nor @everyone.
  const everyone = guildId !== null && has(permissions, Permission.MENTION_EVERYONE)
  const roleIds = guildId === null ? [] : ids(content, ROLE)
  const roles = roleIds.length && guildId ? new Map((await cachedGuildRoles(guildId)).map((r) => [r.id, r])) : new Map()
  return {
    users: userIds.filter((id) => users.has(id)),
    roles: roleIds.filter((id) => {
      const role = roles.get(id)
      return role !== undefined && id !== guildId && (role.mentionable || everyone) && may('roles', id)
    }),
    everyone: everyone && EVERYONE.test(content) && may('everyone'),
  }
}
