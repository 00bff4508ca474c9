// Gateway op 8 Request Guild Members, answered as Discord's: GUILD_MEMBERS_CHUNK dispatches to the asking session,
// 1000 members each (discord.js's `guild.members.fetch()` and `fetch({ query })` wait for them). By user ids (up to
// 100, the others in `not_found`), or by a prefix of the username or nickname (`query`, case-insensitive; at most
// `limit`, 100 at most; "" with limit 0: every member). Presences are not kept: `presences: true` gets an empty list.
// A frame that is not such a request, or names a guild the caller is not in, is passed over, as Discord does.
import { cachedUser } from '../accounts/store'
import { isSnowflake } from '../core/snowflake'
import { audiences, type GatewayConnection, sees } from '../gateway/bus'
import { membersNamed } from './members'
import { memberObject } from './serialize'
import { cachedGuild, cachedGuildMember, cachedMemberRoleIds } from './store'

const CHUNK = 1000
const MAX_USER_IDS = 100
const MAX_QUERY_LIMIT = 100
const MAX_NONCE_BYTES = 32

type Member = ReturnType<typeof memberObject>
type Request = {
  guildId: string
  userIds?: string[]
  query?: string
  limit: number
  presences: boolean
  nonce?: string
}

function parse(data: unknown): Request | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const d = data as Record<string, unknown>
  if (!isSnowflake(d.guild_id)) return undefined
  const ids = typeof d.user_ids === 'string' ? [d.user_ids] : d.user_ids
  const userIds = Array.isArray(ids) && ids.length <= MAX_USER_IDS && ids.every(isSnowflake) ? ids : undefined
  const query = typeof d.query === 'string' ? d.query : undefined
  const limit = d.limit ?? 0
  if (userIds === undefined && query === undefined) return undefined
  if (!Number.isSafeInteger(limit) || (limit as number) < 0) return undefined
  // A nonce longer than Discord takes is not echoed (Discord drops it).
  const nonce = typeof d.nonce === 'string' && Buffer.byteLength(d.nonce) <= MAX_NONCE_BYTES ? d.nonce : undefined
  return { guildId: d.guild_id, userIds, query, limit: limit as number, presences: d.presences === true, nonce }
}

export async function requestGuildMembers(connection: GatewayConnection, data: unknown): Promise<void> {
  const request = parse(data)
  const { caller } = connection
  if (!request || !sees(caller, audiences.guildActivity)) return
  const guild = await cachedGuild(request.guildId)
  if (!guild || !(await cachedGuildMember(guild.id, caller.userId))) return
  const { members, notFound } = request.userIds
    ? await byIds(guild.id, [...new Set(request.userIds)])
    : { members: await membersNamed(guild.id, request.query!, queryLimit(request)), notFound: undefined }
  const count = Math.max(1, Math.ceil(members.length / CHUNK))
  for (let index = 0; index < count; index++)
    connection.send('GUILD_MEMBERS_CHUNK', {
      guild_id: guild.id,
      members: members.slice(index * CHUNK, (index + 1) * CHUNK),
      chunk_index: index,
      chunk_count: count,
      ...(notFound?.length && index === 0 ? { not_found: notFound } : {}),
      ...(request.presences ? { presences: [] } : {}),
      ...(request.nonce !== undefined ? { nonce: request.nonce } : {}),
    })
}

/** "" with limit 0 asks for every member; otherwise at most `limit` (0: the most), and never more than 100. */
function queryLimit({ query, limit }: Request): number {
  return query === '' && limit === 0 ? Number.POSITIVE_INFINITY : Math.min(limit || MAX_QUERY_LIMIT, MAX_QUERY_LIMIT)
}

async function byIds(guildId: string, ids: string[]) {
  const members: Member[] = []
  const notFound: string[] = []
  for (const id of ids) {
    const member = await cachedGuildMember(guildId, id)
    if (!member) notFound.push(id)
    else members.push(memberObject(member, await cachedUser(id), await cachedMemberRoleIds(guildId, id)))
  }
  return { members, notFound }
}
