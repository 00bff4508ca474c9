// Every query of the guilds domain, async as every store (docs/DESIGN.md, "Stores are async"): readers take the open
// transaction as an optional last `tx`, writers take it first. The statements of the hot paths (channel access, a
// page of messages, posting one, READY) are prepared once per connection and run on the connection of the caller's
// scope (inside a transaction, the write connection).
import {
  and,
  asc,
  count,
  countDistinct,
  desc,
  eq,
  getTableColumns,
  gt,
  inArray,
  isNotNull,
  sql,
  type SQL,
} from 'drizzle-orm'
import { usersVersion } from '../accounts/store'
import { PageCache, rowCache } from '../db/cache'
import { db, idsTable, idValue, jsonPlaceholder, prepared, toJson, write, type DB } from '../db/client'
import {
  channels,
  guilds,
  bans,
  invites,
  memberRoles,
  members,
  messages,
  reactions,
  roles,
  NO_MENTIONS,
  type BanRow,
  type ChannelRow,
  type GuildRow,
  type InviteRow,
  type MemberRow,
  type MessageRow,
  type RoleRow,
} from './tables'

const ph = sql.placeholder

const memberStmt = prepared((d) =>
  d
    .select()
    .from(members)
    .where(and(eq(members.guildId, sql.placeholder('guildId')), eq(members.userId, sql.placeholder('userId'))))
    .prepare(),
)
const channelStmt = prepared((d) =>
  d
    .select()
    .from(channels)
    .where(eq(channels.id, sql.placeholder('id')))
    .prepare(),
)
const guildStmt = prepared((d) =>
  d
    .select()
    .from(guilds)
    .where(eq(guilds.id, sql.placeholder('id')))
    .prepare(),
)

// What every channel request reads to decide access (the channel, its guild, the caller's membership, the guild's
// roles and the caller's role ids), cached; the writers below forget what they change (db/cache.ts has the rules).
const guildRows = rowCache<string, GuildRow>(1024)
const channelRows = rowCache<string, ChannelRow>(4096)
const memberRows = rowCache<string, MemberRow>(8192)
const roleLists = rowCache<string, RoleRow[]>(1024)
const memberRoleLists = rowCache<string, string[]>(8192)
const memberKey = (guildId: string, userId: string) => `${guildId} ${userId}`

export async function cachedGuild(id: string): Promise<GuildRow | undefined> {
  return guildRows.read(id, () => guildStmt().get({ id }))
}

export async function cachedGuildMember(guildId: string, userId: string): Promise<MemberRow | undefined> {
  return memberRows.read(memberKey(guildId, userId), () => memberStmt().get({ guildId, userId }))
}

export async function cachedChannel(id: string): Promise<ChannelRow | undefined> {
  return channelRows.read(id, () => channelStmt().get({ id }))
}

// Sorted here rather than by ORDER BY: SQLite sorts through a temporary b-tree, which took 9 µs for a guild's one
// role, more than the rest of a channel's access check.
const rolesOf = prepared((d) =>
  d
    .select()
    .from(roles)
    .where(eq(roles.guildId, ph('guildId')))
    .prepare(),
)
const roleOrder = (a: RoleRow, b: RoleRow) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
// Several guilds at once (READY): a JSON list of guild ids (idsTable), each probed through the guild index.
const rolesOfGuilds = prepared((d) =>
  d
    .select(getTableColumns(roles))
    .from(idsTable())
    .crossJoin(roles)
    .where(eq(roles.guildId, idValue))
    .orderBy(asc(roles.position), asc(roles.id))
    .prepare(),
)
const roleIdsOfMember = prepared((d) =>
  d
    .select({ roleId: memberRoles.roleId })
    .from(memberRoles)
    .where(and(eq(memberRoles.guildId, ph('guildId')), eq(memberRoles.userId, ph('userId'))))
    .prepare(),
)
const roleIdsOfMemberIn = prepared((d) =>
  d
    .select({ guildId: memberRoles.guildId, roleId: memberRoles.roleId })
    .from(idsTable())
    .crossJoin(memberRoles)
    .where(and(eq(memberRoles.guildId, idValue), eq(memberRoles.userId, ph('userId'))))
    .prepare(),
)
const channelsOf = prepared((d) =>
  d
    .select()
    .from(channels)
    .where(eq(channels.guildId, ph('guildId')))
    .orderBy(asc(channels.position), asc(channels.id))
    .prepare(),
)
const channelsOfGuilds = prepared((d) =>
  d
    .select(getTableColumns(channels))
    .from(idsTable())
    .crossJoin(channels)
    .where(eq(channels.guildId, idValue))
    .orderBy(asc(channels.position), asc(channels.id))
    .prepare(),
)
const memberCountOf = prepared((d) =>
  d
    .select({ n: count() })
    .from(members)
    .where(eq(members.guildId, ph('guildId')))
    .prepare(),
)
const memberCountsOf = prepared((d) =>
  d
    .select({ guildId: members.guildId, n: count() })
    .from(idsTable())
    .crossJoin(members)
    .where(eq(members.guildId, idValue))
    .groupBy(members.guildId)
    .prepare(),
)
// The user's memberships, then each guild by its key (CROSS JOIN: that order, whatever the statistics say).
const membershipsOf = prepared((d) =>
  d
    .select({ guild: getTableColumns(guilds), member: getTableColumns(members) })
    .from(members)
    .crossJoin(guilds)
    .where(and(eq(members.userId, ph('userId')), eq(guilds.id, members.guildId)))
    .orderBy(asc(guilds.id))
    .prepare(),
)

/** Rows of several guilds, grouped by guild in the order read. */
function byGuild<T extends { guildId: string }>(rows: T[]): Map<string, T[]> {
  const out = new Map<string, T[]>()
  for (const row of rows) {
    const list = out.get(row.guildId)
    if (list) list.push(row)
    else out.set(row.guildId, [row])
  }
  return out
}

export async function cachedGuildRoles(guildId: string, _tx?: DB): Promise<RoleRow[]> {
  return roleLists.read(guildId, () => rolesOf().all({ guildId }).sort(roleOrder))!
}

/** The roles of several guilds (each guild's in cachedGuildRoles' order), in one query. */
export async function rolesOfEach(guildIds: string[]): Promise<Map<string, RoleRow[]>> {
  return guildIds.length ? byGuild(rolesOfGuilds().all({ ids: JSON.stringify(guildIds) })) : new Map()
}

/** A user's role ids in several guilds, in one query. */
export async function memberRoleIdsOfEach(guildIds: string[], userId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!guildIds.length) return out
  for (const [guildId, rows] of byGuild(roleIdsOfMemberIn().all({ ids: JSON.stringify(guildIds), userId })))
    out.set(
      guildId,
      rows.map((r) => r.roleId),
    )
  return out
}

const roleIdsOfUsers = prepared((d) =>
  d
    .select({ userId: memberRoles.userId, roleId: memberRoles.roleId })
    .from(idsTable())
    .crossJoin(memberRoles)
    .where(and(eq(memberRoles.guildId, ph('guildId')), eq(memberRoles.userId, idValue)))
    .prepare(),
)

/** The role ids of several members of one guild, in one query. */
export async function memberRoleIdsOfUsers(guildId: string, userIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!userIds.length) return out
  for (const { userId, roleId } of roleIdsOfUsers().all({ guildId, ids: JSON.stringify(userIds) })) {
    const list = out.get(userId)
    if (list) list.push(roleId)
    else out.set(userId, [roleId])
  }
  return out
}

/** The channels of several guilds (each guild's in guildChannels' order), in one query. */
export async function channelsOfEach(guildIds: string[]): Promise<Map<string, ChannelRow[]>> {
  return guildIds.length ? byGuild(channelsOfGuilds().all({ ids: JSON.stringify(guildIds) })) : new Map()
}

/** The member counts of several guilds, in one query. */
export async function memberCountOfEach(guildIds: string[]): Promise<Map<string, number>> {
  if (!guildIds.length) return new Map()
  return new Map(
    memberCountsOf()
      .all({ ids: JSON.stringify(guildIds) })
      .map((r) => [r.guildId, r.n]),
  )
}

/** The guilds a user is in, with the membership, by guild id. */
export async function membershipsOfUser(userId: string): Promise<{ guild: GuildRow; member: MemberRow }[]> {
  return membershipsOf().all({ userId })
}

export async function getRole(guildId: string, roleId: string): Promise<RoleRow | undefined> {
  return db()
    .select()
    .from(roles)
    .where(and(eq(roles.guildId, guildId), eq(roles.id, roleId)))
    .get()
}

export async function cachedMemberRoleIds(guildId: string, userId: string, _tx?: DB): Promise<string[]> {
  return memberRoleLists.read(memberKey(guildId, userId), () =>
    roleIdsOfMember()
      .all({ guildId, userId })
      .map((r) => r.roleId),
  )!
}

export async function guildMembers(guildId: string, limit = 1000, after = '0'): Promise<MemberRow[]> {
  return db()
    .select()
    .from(members)
    .where(
      and(eq(members.guildId, guildId), gt(sql`CAST(${members.userId} AS INTEGER)`, sql`CAST(${after} AS INTEGER)`)),
    )
    .orderBy(sql`CAST(${members.userId} AS INTEGER)`)
    .limit(limit)
    .all()
}

export async function memberUserIds(guildId: string, tx: DB = db()): Promise<string[]> {
  return tx
    .select({ id: members.userId })
    .from(members)
    .where(eq(members.guildId, guildId))
    .all()
    .map((r) => r.id)
}

export async function memberCount(guildId: string, _tx?: DB): Promise<number> {
  return memberCountOf().get({ guildId })?.n ?? 0
}

export async function guildsOfUser(userId: string): Promise<GuildRow[]> {
  return membershipsOf()
    .all({ userId })
    .map((r) => r.guild)
}

export async function guildChannels(guildId: string, _tx?: DB): Promise<ChannelRow[]> {
  return channelsOf().all({ guildId })
}

// A page of channel messages: newest first; after a cursor alone, the oldest ones newer than it, read ascending.
const messageOrder = sql`CAST(${messages.id} AS INTEGER)`
const inChannel = eq(messages.channelId, ph('channelId'))
const messagePage = (where: SQL | undefined, order: SQL) =>
  prepared((d) => d.select().from(messages).where(where).orderBy(order).limit(ph('limit')).prepare())
const pageNewest = messagePage(inChannel, desc(messageOrder))
const pageBefore = messagePage(
  and(inChannel, sql`${messageOrder} < CAST(${ph('before')} AS INTEGER)`),
  desc(messageOrder),
)
const pageAfter = messagePage(and(inChannel, sql`${messageOrder} > CAST(${ph('after')} AS INTEGER)`), asc(messageOrder))
const pageAtOrBefore = messagePage(
  and(inChannel, sql`${messageOrder} <= CAST(${ph('around')} AS INTEGER)`),
  desc(messageOrder),
)

// Pages of GET /channels/{id}/messages as sent (JSON text), per channel and query. A message written to the channel,
// or the channel's or guild's deletion, forgets the channel's pages; a page made before a user row changed (an author
// renamed) is made again (db/cache.ts has the rules).
const messagePages = new PageCache(1024, 32, 64 * 1024 * 1024)

/** The channel's page for this query as JSON text: cached, else `build()`'s. Read inside the request's snapshot. */
export async function cachedMessagePage(
  channelId: string,
  query: string,
  build: () => Promise<string>,
): Promise<string> {
  return messagePages.read(channelId, query, usersVersion(), build)
}

/** Newest first. `before`/`after` exclusive; `around` splits the limit on both sides. */
export async function channelMessages(
  channelId: string,
  q: { limit: number; before?: string; after?: string; around?: string },
): Promise<MessageRow[]> {
  if (q.around) {
    const half = Math.floor(q.limit / 2)
    const older = pageAtOrBefore().all({ channelId, around: q.around, limit: q.limit - half })
    const newer = pageAfter().all({ channelId, after: q.around, limit: half })
    return [...newer.reverse(), ...older]
  }
  if (q.after && !q.before) return pageAfter().all({ channelId, after: q.after, limit: q.limit }).reverse()
  if (q.before) return pageBefore().all({ channelId, before: q.before, limit: q.limit })
  return pageNewest().all({ channelId, limit: q.limit })
}

export async function getInvite(code: string): Promise<InviteRow | undefined> {
  return db().select().from(invites).where(eq(invites.code, code)).get()
}

/** Count one use if the invite is still valid for this user; atomic, so parallel joins never exceed max_uses. */
export async function claimInviteUse(code: string, now: number, userId: string): Promise<InviteRow | undefined> {
  return await write((w) => {
    return w
      .update(invites)
      .set({ uses: sql`${invites.uses} + 1` })
      .where(
        and(
          eq(invites.code, code),
          sql`(${invites.maxUses} = 0 OR ${invites.uses} < ${invites.maxUses})`,
          sql`(${invites.expiresAt} IS NULL OR ${invites.expiresAt} > ${now})`,
          sql`(${invites.targetUserId} IS NULL OR ${invites.targetUserId} = ${userId})`,
        ),
      )
      .returning()
      .get()
  })
}

export async function reusableInvite(
  channelId: string,
  inviterId: string,
  maxAge: number,
  maxUses: number,
  temporary: boolean,
  now: number,
): Promise<InviteRow | undefined> {
  return db()
    .select()
    .from(invites)
    .where(
      and(
        eq(invites.channelId, channelId),
        eq(invites.inviterId, inviterId),
        eq(invites.maxAge, maxAge),
        eq(invites.maxUses, maxUses),
        eq(invites.temporary, temporary),
        eq(invites.uses, 0),
        sql`${invites.targetUserId} IS NULL`,
        sql`(${invites.expiresAt} IS NULL OR ${invites.expiresAt} > ${now})`,
      ),
    )
    .get()
}

/** The invites of a guild or of one channel still usable at `now` (not expired, uses left), oldest first. */
export async function liveInvites(
  where: { guildId: string } | { channelId: string },
  now: number,
): Promise<InviteRow[]> {
  return db()
    .select()
    .from(invites)
    .where(
      and(
        'guildId' in where ? eq(invites.guildId, where.guildId) : eq(invites.channelId, where.channelId),
        sql`(${invites.expiresAt} IS NULL OR ${invites.expiresAt} > ${now})`,
        sql`(${invites.maxUses} = 0 OR ${invites.uses} < ${invites.maxUses})`,
      ),
    )
    .orderBy(asc(invites.createdAt), asc(invites.code))
    .all()
}

// ---- writers

export async function insertGuild(tx: DB, row: typeof guilds.$inferInsert): Promise<void> {
  if (row.id) guildRows.forget(row.id)
  tx.insert(guilds).values(row).run()
}

export async function updateGuild(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof guilds.$inferInsert, 'id'>>,
): Promise<void> {
  guildRows.forget(id)
  tx.update(guilds).set(patch).where(eq(guilds.id, id)).run()
}

export async function deleteGuildRow(tx: DB, id: string): Promise<void> {
  // Its channels, members, roles and messages go with it.
  for (const cache of [guildRows, channelRows, memberRows, roleLists, memberRoleLists, messagePages]) cache.clear()
  tx.delete(guilds).where(eq(guilds.id, id)).run()
}

export async function insertRole(tx: DB, row: typeof roles.$inferInsert): Promise<RoleRow> {
  roleLists.forget(row.guildId)
  return tx.insert(roles).values(row).returning().get()
}

export async function updateRoleRow(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof roles.$inferInsert, 'id'>>,
): Promise<RoleRow> {
  roleLists.clear() // by role id: its guild is not known here
  return tx.update(roles).set(patch).where(eq(roles.id, id)).returning().get()
}

export async function deleteRoleRow(tx: DB, id: string): Promise<void> {
  roleLists.clear()
  memberRoleLists.clear() // the role leaves every member who had it
  tx.delete(roles).where(eq(roles.id, id)).run()
}

export async function addMemberRole(tx: DB, guildId: string, userId: string, roleId: string): Promise<void> {
  memberRoleLists.forget(memberKey(guildId, userId))
  tx.insert(memberRoles).values({ guildId, userId, roleId }).onConflictDoNothing().run()
}

export async function removeMemberRole(tx: DB, guildId: string, userId: string, roleId: string): Promise<void> {
  memberRoleLists.forget(memberKey(guildId, userId))
  tx.delete(memberRoles)
    .where(and(eq(memberRoles.guildId, guildId), eq(memberRoles.userId, userId), eq(memberRoles.roleId, roleId)))
    .run()
}

/** Add a member; undefined when the user already is one. */
export async function insertMember(tx: DB, row: typeof members.$inferInsert): Promise<MemberRow | undefined> {
  memberRows.forget(memberKey(row.guildId, row.userId))
  memberRoleLists.forget(memberKey(row.guildId, row.userId))
  return tx.insert(members).values(row).onConflictDoNothing().returning().get()
}

export async function updateMemberRow(
  tx: DB,
  guildId: string,
  userId: string,
  patch: Partial<Pick<MemberRow, 'nick' | 'communicationDisabledUntil'>>,
): Promise<MemberRow | undefined> {
  memberRows.forget(memberKey(guildId, userId))
  return tx
    .update(members)
    .set(patch)
    .where(and(eq(members.guildId, guildId), eq(members.userId, userId)))
    .returning()
    .get()
}

// ---- bans

/** Ban a user; false when the ban was already there (it keeps its reason). */
export async function insertBan(tx: DB, row: typeof bans.$inferInsert): Promise<boolean> {
  return tx.insert(bans).values(row).onConflictDoNothing().returning().get() !== undefined
}

/** Lift a ban; false when there was none. */
export async function deleteBan(tx: DB, guildId: string, userId: string): Promise<boolean> {
  return (
    tx
      .delete(bans)
      .where(and(eq(bans.guildId, guildId), eq(bans.userId, userId)))
      .returning()
      .get() !== undefined
  )
}

export async function findBan(guildId: string, userId: string): Promise<BanRow | undefined> {
  return db()
    .select()
    .from(bans)
    .where(and(eq(bans.guildId, guildId), eq(bans.userId, userId)))
    .get()
}

/** A page of the guild's bans in user id order, after or before a user id. */
export async function guildBans(
  guildId: string,
  page: { limit: number; before?: string; after?: string },
): Promise<BanRow[]> {
  const userNumber = sql`CAST(${bans.userId} AS INTEGER)`
  const rows = db()
    .select()
    .from(bans)
    .where(
      and(
        eq(bans.guildId, guildId),
        page.after !== undefined ? gt(userNumber, sql`CAST(${page.after} AS INTEGER)`) : undefined,
        page.before !== undefined ? sql`${userNumber} < CAST(${page.before} AS INTEGER)` : undefined,
      ),
    )
    .orderBy(page.before !== undefined && page.after === undefined ? desc(userNumber) : asc(userNumber))
    .limit(page.limit)
    .all()
  return page.before !== undefined && page.after === undefined ? rows.reverse() : rows
}

/** The ids of an author's messages in these channels made since `since` (ms), by channel. */
export async function authorMessagesSince(
  tx: DB,
  channelIds: string[],
  authorId: string,
  since: number,
): Promise<{ id: string; channelId: string }[]> {
  if (!channelIds.length) return []
  return tx
    .select({ id: messages.id, channelId: messages.channelId })
    .from(messages)
    .where(and(inArray(messages.channelId, channelIds), eq(messages.authorId, authorId), gt(messages.createdAt, since)))
    .all()
}

/** Remove a member and the member's roles. */
export async function deleteMember(tx: DB, guildId: string, userId: string): Promise<void> {
  memberRows.forget(memberKey(guildId, userId))
  memberRoleLists.forget(memberKey(guildId, userId))
  tx.delete(memberRoles)
    .where(and(eq(memberRoles.guildId, guildId), eq(memberRoles.userId, userId)))
    .run()
  tx.delete(members)
    .where(and(eq(members.guildId, guildId), eq(members.userId, userId)))
    .run()
}

export async function insertChannel(tx: DB, row: typeof channels.$inferInsert): Promise<ChannelRow> {
  if (row.id) channelRows.forget(row.id)
  return tx.insert(channels).values(row).returning().get()
}

export async function updateChannelRow(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof channels.$inferInsert, 'id'>>,
): Promise<ChannelRow> {
  channelRows.forget(id)
  return tx.update(channels).set(patch).where(eq(channels.id, id)).returning().get()
}

export async function deleteChannelRow(tx: DB, id: string): Promise<void> {
  messagePages.forget(id)
  channelRows.forget(id)
  tx.delete(channels).where(eq(channels.id, id)).run()
}

const recentNonce = prepared((d) =>
  d
    .select()
    .from(messages)
    .where(
      and(
        eq(messages.channelId, ph('channelId')),
        eq(messages.authorId, ph('authorId')),
        eq(messages.nonce, ph('nonce')),
        gt(messages.createdAt, ph('since')),
      ),
    )
    .prepare(),
)
const messageInsert = prepared((d) =>
  d
    .insert(messages)
    .values({
      id: ph('id'),
      channelId: ph('channelId'),
      authorId: ph('authorId'),
      content: ph('content'),
      nonce: ph('nonce'),
      createdAt: ph('createdAt'),
      embeds: jsonPlaceholder('embeds'),
      referenceId: ph('referenceId'),
      mentions: jsonPlaceholder('mentions'),
    })
    .returning()
    .prepare(),
)
const lastMessageSet = prepared((d) =>
  d
    .update(channels)
    .set({ lastMessageId: sql`${ph('lastMessageId')}` })
    .where(eq(channels.id, ph('id')))
    .prepare(),
)

/** The author's message with this nonce in the channel since `since` (enforce_nonce). */
export async function recentMessageWithNonce(
  _tx: DB,
  channelId: string,
  authorId: string,
  nonce: string,
  since: number,
): Promise<MessageRow | undefined> {
  return recentNonce().get({ channelId, authorId, nonce, since })
}

export async function insertMessage(_tx: DB, row: typeof messages.$inferInsert): Promise<MessageRow> {
  messagePages.forget(row.channelId)
  return messageInsert().get({
    id: row.id,
    channelId: row.channelId,
    authorId: row.authorId,
    content: row.content,
    nonce: row.nonce ?? null,
    createdAt: row.createdAt,
    embeds: toJson(row.embeds ?? []),
    referenceId: row.referenceId ?? null,
    mentions: toJson(row.mentions ?? NO_MENTIONS),
  })!
}

export async function findMessage(id: string): Promise<MessageRow | undefined> {
  return db().select().from(messages).where(eq(messages.id, id)).get()
}

/** A new message in the channel: its last_message_id. */
export async function setLastMessageId(_tx: DB, channelId: string, messageId: string): Promise<void> {
  channelRows.forget(channelId)
  lastMessageSet().run({ id: channelId, lastMessageId: messageId })
}

export async function insertInvite(tx: DB, row: typeof invites.$inferInsert): Promise<InviteRow> {
  return tx.insert(invites).values(row).returning().get()
}

export async function deleteInviteRow(tx: DB, code: string): Promise<void> {
  tx.delete(invites).where(eq(invites.code, code)).run()
}

// ---- one message: edits, deletions, pins, reactions. Each writer forgets the channel's pages.

/** The message if it is in this channel. */
export async function messageInChannel(channelId: string, id: string, tx: DB = db()): Promise<MessageRow | undefined> {
  return tx
    .select()
    .from(messages)
    .where(and(eq(messages.id, id), eq(messages.channelId, channelId)))
    .get()
}

/** Those of these messages that are in this channel. */
export async function messagesInChannel(channelId: string, ids: string[], tx: DB = db()): Promise<MessageRow[]> {
  return tx
    .select()
    .from(messages)
    .where(and(eq(messages.channelId, channelId), inArray(messages.id, ids)))
    .all()
}

export type MessagePatch = Partial<Pick<MessageRow, 'content' | 'embeds' | 'mentions' | 'editedAt' | 'pinnedAt'>>

/** Change a message of this channel; undefined when it is not there (deleted meanwhile). */
export async function updateMessageRow(
  tx: DB,
  channelId: string,
  id: string,
  patch: MessagePatch,
): Promise<MessageRow | undefined> {
  messagePages.forget(channelId)
  return tx
    .update(messages)
    .set(patch)
    .where(and(eq(messages.id, id), eq(messages.channelId, channelId)))
    .returning()
    .get()
}

/** Delete these messages of the channel (their reactions go with them); the ids that were there. */
export async function deleteMessageRows(tx: DB, channelId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  messagePages.forget(channelId)
  return tx
    .delete(messages)
    .where(and(eq(messages.channelId, channelId), inArray(messages.id, ids)))
    .returning({ id: messages.id })
    .all()
    .map((r) => r.id)
}

const isPinned = (channelId: string) => and(eq(messages.channelId, channelId), isNotNull(messages.pinnedAt))

/** The channel's pinned messages, the latest pinned first. */
export async function pinnedMessages(channelId: string): Promise<MessageRow[]> {
  return db().select().from(messages).where(isPinned(channelId)).orderBy(desc(messages.pinnedAt)).all()
}

export async function pinCount(channelId: string, tx: DB = db()): Promise<number> {
  return tx.select({ n: count() }).from(messages).where(isPinned(channelId)).get()?.n ?? 0
}

/** When the channel's latest pin was made (CHANNEL_PINS_UPDATE's last_pin_timestamp); null without pins. */
export async function lastPinAt(channelId: string, tx: DB = db()): Promise<number | null> {
  return (
    tx
      .select({ at: sql<number | null>`max(${messages.pinnedAt})` })
      .from(messages)
      .where(isPinned(channelId))
      .get()?.at ?? null
  )
}

export type ReactionCount = { emoji: string; count: number; me: boolean }

// Per message and emoji: how many, whether the reader is among them, in the order each emoji was first used.
const reactionCountsOf = prepared((d) =>
  d
    .select({
      messageId: reactions.messageId,
      emoji: reactions.emoji,
      count: count(),
      me: sql<number | null>`max(${reactions.userId} = ${ph('userId')})`,
    })
    .from(idsTable())
    .crossJoin(reactions)
    .where(eq(reactions.messageId, idValue))
    .groupBy(reactions.messageId, reactions.emoji)
    .orderBy(sql`min(${reactions.createdAt})`, reactions.emoji)
    .prepare(),
)

/** The reactions on these messages as the reader sees them (`me`; null: nobody's), in one query. */
export async function reactionCounts(
  messageIds: string[],
  readerId: string | null,
): Promise<Map<string, ReactionCount[]>> {
  const out = new Map<string, ReactionCount[]>()
  if (!messageIds.length) return out
  for (const r of reactionCountsOf().all({ ids: JSON.stringify(messageIds), userId: readerId })) {
    const item = { emoji: r.emoji, count: r.count, me: r.me === 1 }
    const list = out.get(r.messageId)
    if (list) list.push(item)
    else out.set(r.messageId, [item])
  }
  return out
}

/** The emoji on a message (at most 20 differ), and whether this one is among them. */
export async function messageEmoji(
  messageId: string,
  emoji: string,
  tx: DB = db(),
): Promise<{ kinds: number; has: boolean }> {
  const row = tx
    .select({
      kinds: countDistinct(reactions.emoji),
      has: sql<number>`coalesce(max(${reactions.emoji} = ${emoji}), 0)`,
    })
    .from(reactions)
    .where(eq(reactions.messageId, messageId))
    .get()
  return { kinds: row?.kinds ?? 0, has: row?.has === 1 }
}

/** A user's reaction; false when it was already there. */
export async function insertReaction(tx: DB, channelId: string, row: typeof reactions.$inferInsert): Promise<boolean> {
  messagePages.forget(channelId)
  return tx.insert(reactions).values(row).onConflictDoNothing().returning({ at: reactions.createdAt }).all().length > 0
}

/** Remove one user's reaction; false when there was none. */
export async function deleteReaction(
  tx: DB,
  channelId: string,
  messageId: string,
  emoji: string,
  userId: string,
): Promise<boolean> {
  messagePages.forget(channelId)
  return (
    tx
      .delete(reactions)
      .where(and(eq(reactions.messageId, messageId), eq(reactions.emoji, emoji), eq(reactions.userId, userId)))
      .returning({ at: reactions.createdAt })
      .all().length > 0
  )
}

/** Remove every reaction on a message, or every one of an emoji; how many there were. */
export async function deleteReactions(tx: DB, channelId: string, messageId: string, emoji?: string): Promise<number> {
  messagePages.forget(channelId)
  const where = emoji
    ? and(eq(reactions.messageId, messageId), eq(reactions.emoji, emoji))
    : eq(reactions.messageId, messageId)
  return tx.delete(reactions).where(where).returning({ at: reactions.createdAt }).all().length
}

/** The ids of the users who reacted with an emoji, by id, after a user id. */
export async function reactionUserIds(
  messageId: string,
  emoji: string,
  after: string,
  limit: number,
): Promise<string[]> {
  const byId = sql`CAST(${reactions.userId} AS INTEGER)`
  return db()
    .select({ userId: reactions.userId })
    .from(reactions)
    .where(
      and(eq(reactions.messageId, messageId), eq(reactions.emoji, emoji), gt(byId, sql`CAST(${after} AS INTEGER)`)),
    )
    .orderBy(byId)
    .limit(limit)
    .all()
    .map((r) => r.userId)
}
