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
  lt,
  lte,
  type SQL,
  sql,
} from 'drizzle-orm'
import { usersVersion } from '../accounts/store'
import { PageCache, rowCache } from '../db/cache'
import {
  andThen,
  asInteger,
  type DB,
  db,
  idsTable,
  idValue,
  jsonPlaceholder,
  lockForUpdate,
  lockName,
  prepared,
  toJson,
  write,
} from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import {
  NO_MENTIONS,
  type BanRow,
  type ChannelRow,
  type GuildRow,
  type InviteRow,
  type MemberRow,
  type MessageRow,
  type RoleRow,
} from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables)

const ph = sql.placeholder

const memberStmt = prepared((d) =>
  d
    .select()
    .from(t.members)
    .where(and(eq(t.members.guildId, sql.placeholder('guildId')), eq(t.members.userId, sql.placeholder('userId'))))
    .prepare(),
)
const channelStmt = prepared((d) =>
  d
    .select()
    .from(t.channels)
    .where(eq(t.channels.id, sql.placeholder('id')))
    .prepare(),
)
const guildStmt = prepared((d) =>
  d
    .select()
    .from(t.guilds)
    .where(eq(t.guilds.id, sql.placeholder('id')))
    .prepare(),
)

// What every channel request reads to decide access (the channel, its guild, the caller's membership, the guild's
// roles and the caller's role ids), cached; the writers below forget what they change (db/cache.ts has the rules).
const guildRows = rowCache<string, GuildRow>('guilds', 1024)
const channelRows = rowCache<string, ChannelRow>('channels', 4096)
const memberRows = rowCache<string, MemberRow>('guild-members', 8192)
const roleLists = rowCache<string, RoleRow[]>('guild-roles', 1024)
const memberRoleLists = rowCache<string, string[]>('guild-member-roles', 8192)
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
    .from(t.roles)
    .where(eq(t.roles.guildId, ph('guildId')))
    .prepare(),
)
const roleOrder = (a: RoleRow, b: RoleRow) => a.position - b.position || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
// Several guilds at once (READY): a JSON list of guild ids (idsTable), each probed through the guild index.
const rolesOfGuilds = prepared((d) =>
  d
    .select(getTableColumns(t.roles))
    .from(idsTable())
    .crossJoin(t.roles)
    .where(eq(t.roles.guildId, idValue))
    .orderBy(asc(t.roles.position), asc(t.roles.id))
    .prepare(),
)
const roleIdsOfMember = prepared((d) =>
  d
    .select({ roleId: t.memberRoles.roleId })
    .from(t.memberRoles)
    .where(and(eq(t.memberRoles.guildId, ph('guildId')), eq(t.memberRoles.userId, ph('userId'))))
    .prepare(),
)
const roleIdsOfMemberIn = prepared((d) =>
  d
    .select({ guildId: t.memberRoles.guildId, roleId: t.memberRoles.roleId })
    .from(idsTable())
    .crossJoin(t.memberRoles)
    .where(and(eq(t.memberRoles.guildId, idValue), eq(t.memberRoles.userId, ph('userId'))))
    .prepare(),
)
const channelsOf = prepared((d) =>
  d
    .select()
    .from(t.channels)
    .where(eq(t.channels.guildId, ph('guildId')))
    .orderBy(asc(t.channels.position), asc(t.channels.id))
    .prepare(),
)
const channelsOfGuilds = prepared((d) =>
  d
    .select(getTableColumns(t.channels))
    .from(idsTable())
    .crossJoin(t.channels)
    .where(eq(t.channels.guildId, idValue))
    .orderBy(asc(t.channels.position), asc(t.channels.id))
    .prepare(),
)
const memberCountOf = prepared((d) =>
  d
    .select({ n: count() })
    .from(t.members)
    .where(eq(t.members.guildId, ph('guildId')))
    .prepare(),
)
const memberCountsOf = prepared((d) =>
  d
    .select({ guildId: t.members.guildId, n: count() })
    .from(idsTable())
    .crossJoin(t.members)
    .where(eq(t.members.guildId, idValue))
    .groupBy(t.members.guildId)
    .prepare(),
)
// The user's memberships, then each guild by its key (CROSS JOIN: that order, whatever the statistics say).
const membershipsOf = prepared((d) =>
  d
    .select({ guild: getTableColumns(t.guilds), member: getTableColumns(t.members) })
    .from(t.members)
    .crossJoin(t.guilds)
    .where(and(eq(t.members.userId, ph('userId')), eq(t.guilds.id, t.members.guildId)))
    .orderBy(asc(t.guilds.id))
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
  return roleLists.read(guildId, () => andThen(rolesOf().all({ guildId }), (rows) => rows.sort(roleOrder)))!
}

/** The roles of several guilds (each guild's in cachedGuildRoles' order), in one query. */
export async function rolesOfEach(guildIds: string[]): Promise<Map<string, RoleRow[]>> {
  return guildIds.length ? byGuild(await rolesOfGuilds().all({ ids: JSON.stringify(guildIds) })) : new Map()
}

/** A user's role ids in several guilds, in one query. */
export async function memberRoleIdsOfEach(guildIds: string[], userId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!guildIds.length) return out
  for (const [guildId, rows] of byGuild(await roleIdsOfMemberIn().all({ ids: JSON.stringify(guildIds), userId })))
    out.set(
      guildId,
      rows.map((r) => r.roleId),
    )
  return out
}

const roleIdsOfUsers = prepared((d) =>
  d
    .select({ userId: t.memberRoles.userId, roleId: t.memberRoles.roleId })
    .from(idsTable())
    .crossJoin(t.memberRoles)
    .where(and(eq(t.memberRoles.guildId, ph('guildId')), eq(t.memberRoles.userId, idValue)))
    .prepare(),
)

/** The role ids of several members of one guild, in one query. */
export async function memberRoleIdsOfUsers(guildId: string, userIds: string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>()
  if (!userIds.length) return out
  for (const { userId, roleId } of await roleIdsOfUsers().all({ guildId, ids: JSON.stringify(userIds) })) {
    const list = out.get(userId)
    if (list) list.push(roleId)
    else out.set(userId, [roleId])
  }
  return out
}

/** The channels of several guilds (each guild's in guildChannels' order), in one query. */
export async function channelsOfEach(guildIds: string[]): Promise<Map<string, ChannelRow[]>> {
  return guildIds.length ? byGuild(await channelsOfGuilds().all({ ids: JSON.stringify(guildIds) })) : new Map()
}

/** The member counts of several guilds, in one query. */
export async function memberCountOfEach(guildIds: string[]): Promise<Map<string, number>> {
  if (!guildIds.length) return new Map()
  return new Map((await memberCountsOf().all({ ids: JSON.stringify(guildIds) })).map((r) => [r.guildId, r.n]))
}

/** The guilds a user is in, with the membership, by guild id. */
export async function membershipsOfUser(userId: string): Promise<{ guild: GuildRow; member: MemberRow }[]> {
  return membershipsOf().all({ userId })
}

export async function getRole(guildId: string, roleId: string): Promise<RoleRow | undefined> {
  return db()
    .select()
    .from(t.roles)
    .where(and(eq(t.roles.guildId, guildId), eq(t.roles.id, roleId)))
    .get()
}

export async function cachedMemberRoleIds(guildId: string, userId: string, _tx?: DB): Promise<string[]> {
  return memberRoleLists.read(memberKey(guildId, userId), () =>
    andThen(roleIdsOfMember().all({ guildId, userId }), (rows) => rows.map((r) => r.roleId)),
  )!
}

export async function guildMembers(guildId: string, limit = 1000, after = '0'): Promise<MemberRow[]> {
  return db()
    .select()
    .from(t.members)
    .where(and(eq(t.members.guildId, guildId), gt(asInteger(t.members.userId), asInteger(after))))
    .orderBy(asInteger(t.members.userId))
    .limit(limit)
    .all()
}

export async function memberUserIds(guildId: string, tx: DB = db()): Promise<string[]> {
  return (await tx.select({ id: t.members.userId }).from(t.members).where(eq(t.members.guildId, guildId)).all()).map(
    (r) => r.id,
  )
}

export async function memberCount(guildId: string, _tx?: DB): Promise<number> {
  return (await memberCountOf().get({ guildId }))?.n ?? 0
}

export async function guildsOfUser(userId: string): Promise<GuildRow[]> {
  return (await membershipsOf().all({ userId })).map((r) => r.guild)
}

export async function guildChannels(guildId: string, _tx?: DB): Promise<ChannelRow[]> {
  return channelsOf().all({ guildId })
}

// A page of channel messages: newest first; after a cursor alone, the oldest ones newer than it, read ascending.
const messageOrder = asInteger(t.messages.id)
const inChannel = eq(t.messages.channelId, ph('channelId'))
const messagePage = (where: SQL | undefined, order: SQL) =>
  prepared((d) => d.select().from(t.messages).where(where).orderBy(order).limit(ph('limit')).prepare())
const pageNewest = messagePage(inChannel, desc(messageOrder))
const pageBefore = messagePage(and(inChannel, lt(messageOrder, asInteger(ph('before')))), desc(messageOrder))
const pageAfter = messagePage(and(inChannel, gt(messageOrder, asInteger(ph('after')))), asc(messageOrder))
const pageAtOrBefore = messagePage(and(inChannel, lte(messageOrder, asInteger(ph('around')))), desc(messageOrder))

// Pages of GET /channels/{id}/messages as sent (JSON text), per channel and query. A message written to the channel,
// or the channel's or guild's deletion, forgets the channel's pages; a page made before a user row changed (an author
// renamed) is made again (db/cache.ts has the rules).
const messagePages = new PageCache('channel-message-pages', 1024, 32, 64 * 1024 * 1024)

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
    const older = await pageAtOrBefore().all({ channelId, around: q.around, limit: q.limit - half })
    const newer = await pageAfter().all({ channelId, after: q.around, limit: half })
    return [...newer.reverse(), ...older]
  }
  if (q.after && !q.before) return (await pageAfter().all({ channelId, after: q.after, limit: q.limit })).reverse()
  if (q.before) return pageBefore().all({ channelId, before: q.before, limit: q.limit })
  return pageNewest().all({ channelId, limit: q.limit })
}

export async function getInvite(code: string): Promise<InviteRow | undefined> {
  return db().select().from(t.invites).where(eq(t.invites.code, code)).get()
}

/** Count one use if the invite is still valid for this user; atomic, so parallel joins never exceed max_uses. */
export async function claimInviteUse(code: string, now: number, userId: string): Promise<InviteRow | undefined> {
  return await write((w) => {
    return w
      .update(t.invites)
      .set({ uses: sql`${t.invites.uses} + 1` })
      .where(
        and(
          eq(t.invites.code, code),
          sql`(${t.invites.maxUses} = 0 OR ${t.invites.uses} < ${t.invites.maxUses})`,
          sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
          sql`(${t.invites.targetUserId} IS NULL OR ${t.invites.targetUserId} = ${userId})`,
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
    .from(t.invites)
    .where(
      and(
        eq(t.invites.channelId, channelId),
        eq(t.invites.inviterId, inviterId),
        eq(t.invites.maxAge, maxAge),
        eq(t.invites.maxUses, maxUses),
        eq(t.invites.temporary, temporary),
        eq(t.invites.uses, 0),
        sql`${t.invites.targetUserId} IS NULL`,
        sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
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
    .from(t.invites)
    .where(
      and(
        'guildId' in where ? eq(t.invites.guildId, where.guildId) : eq(t.invites.channelId, where.channelId),
        sql`(${t.invites.expiresAt} IS NULL OR ${t.invites.expiresAt} > ${now})`,
        sql`(${t.invites.maxUses} = 0 OR ${t.invites.uses} < ${t.invites.maxUses})`,
      ),
    )
    .orderBy(asc(t.invites.createdAt), asc(t.invites.code))
    .all()
}

// ---- writers

export async function insertGuild(tx: DB, row: typeof t.guilds.$inferInsert): Promise<void> {
  if (row.id) guildRows.forget(row.id)
  await tx.insert(t.guilds).values(row).run()
}

export async function updateGuild(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof t.guilds.$inferInsert, 'id'>>,
): Promise<void> {
  guildRows.forget(id)
  await tx.update(t.guilds).set(patch).where(eq(t.guilds.id, id)).run()
}

export async function deleteGuildRow(tx: DB, id: string): Promise<void> {
  // Its channels, members, roles and messages go with it.
  for (const cache of [guildRows, channelRows, memberRows, roleLists, memberRoleLists, messagePages]) cache.clear()
  await tx.delete(t.guilds).where(eq(t.guilds.id, id)).run()
}

export async function insertRole(tx: DB, row: typeof t.roles.$inferInsert): Promise<RoleRow> {
  roleLists.forget(row.guildId)
  return tx.insert(t.roles).values(row).returning().get()
}

export async function updateRoleRow(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof t.roles.$inferInsert, 'id'>>,
): Promise<RoleRow> {
  roleLists.clear() // by role id: its guild is not known here
  return tx.update(t.roles).set(patch).where(eq(t.roles.id, id)).returning().get()
}

export async function deleteRoleRow(tx: DB, id: string): Promise<void> {
  roleLists.clear()
  memberRoleLists.clear() // the role leaves every member who had it
  await tx.delete(t.roles).where(eq(t.roles.id, id)).run()
}

export async function addMemberRole(tx: DB, guildId: string, userId: string, roleId: string): Promise<void> {
  memberRoleLists.forget(memberKey(guildId, userId))
  await tx.insert(t.memberRoles).values({ guildId, userId, roleId }).onConflictDoNothing().run()
}

export async function removeMemberRole(tx: DB, guildId: string, userId: string, roleId: string): Promise<void> {
  memberRoleLists.forget(memberKey(guildId, userId))
  await tx
    .delete(t.memberRoles)
    .where(and(eq(t.memberRoles.guildId, guildId), eq(t.memberRoles.userId, userId), eq(t.memberRoles.roleId, roleId)))
    .run()
}

/** Add a member; undefined when the user already is one. */
export async function insertMember(tx: DB, row: typeof t.members.$inferInsert): Promise<MemberRow | undefined> {
  memberRows.forget(memberKey(row.guildId, row.userId))
  memberRoleLists.forget(memberKey(row.guildId, row.userId))
  return tx.insert(t.members).values(row).onConflictDoNothing().returning().get()
}

export async function updateMemberRow(
  tx: DB,
  guildId: string,
  userId: string,
  patch: Partial<Pick<MemberRow, 'nick' | 'communicationDisabledUntil'>>,
): Promise<MemberRow | undefined> {
  memberRows.forget(memberKey(guildId, userId))
  return tx
    .update(t.members)
    .set(patch)
    .where(and(eq(t.members.guildId, guildId), eq(t.members.userId, userId)))
    .returning()
    .get()
}

// ---- bans

/** Ban a user; false when the ban was already there (it keeps its reason). */
export async function insertBan(tx: DB, row: typeof t.bans.$inferInsert): Promise<boolean> {
  return (await tx.insert(t.bans).values(row).onConflictDoNothing().returning().get()) !== undefined
}

/** Lift a ban; false when there was none. */
export async function deleteBan(tx: DB, guildId: string, userId: string): Promise<boolean> {
  return (
    (await tx
      .delete(t.bans)
      .where(and(eq(t.bans.guildId, guildId), eq(t.bans.userId, userId)))
      .returning()
      .get()) !== undefined
  )
}

export async function findBan(guildId: string, userId: string): Promise<BanRow | undefined> {
  return db()
    .select()
    .from(t.bans)
    .where(and(eq(t.bans.guildId, guildId), eq(t.bans.userId, userId)))
    .get()
}

/** A page of the guild's bans in user id order, after or before a user id. */
export async function guildBans(
  guildId: string,
  page: { limit: number; before?: string; after?: string },
): Promise<BanRow[]> {
  const userNumber = asInteger(t.bans.userId)
  const rows = await db()
    .select()
    .from(t.bans)
    .where(
      and(
        eq(t.bans.guildId, guildId),
        page.after !== undefined ? gt(userNumber, asInteger(page.after)) : undefined,
        page.before !== undefined ? lt(userNumber, asInteger(page.before)) : undefined,
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
    .select({ id: t.messages.id, channelId: t.messages.channelId })
    .from(t.messages)
    .where(
      and(
        inArray(t.messages.channelId, channelIds),
        eq(t.messages.authorId, authorId),
        gt(t.messages.createdAt, since),
      ),
    )
    .all()
}

/** Remove a member and the member's roles. */
export async function deleteMember(tx: DB, guildId: string, userId: string): Promise<void> {
  memberRows.forget(memberKey(guildId, userId))
  memberRoleLists.forget(memberKey(guildId, userId))
  await tx
    .delete(t.memberRoles)
    .where(and(eq(t.memberRoles.guildId, guildId), eq(t.memberRoles.userId, userId)))
    .run()
  await tx
    .delete(t.members)
    .where(and(eq(t.members.guildId, guildId), eq(t.members.userId, userId)))
    .run()
}

export async function insertChannel(tx: DB, row: typeof t.channels.$inferInsert): Promise<ChannelRow> {
  if (row.id) channelRows.forget(row.id)
  return tx.insert(t.channels).values(row).returning().get()
}

export async function updateChannelRow(
  tx: DB,
  id: string,
  patch: Partial<Omit<typeof t.channels.$inferInsert, 'id'>>,
): Promise<ChannelRow> {
  channelRows.forget(id)
  return tx.update(t.channels).set(patch).where(eq(t.channels.id, id)).returning().get()
}

export async function deleteChannelRow(tx: DB, id: string): Promise<void> {
  messagePages.forget(id)
  channelRows.forget(id)
  await tx.delete(t.channels).where(eq(t.channels.id, id)).run()
}

const recentNonce = prepared((d) =>
  d
    .select()
    .from(t.messages)
    .where(
      and(
        eq(t.messages.channelId, ph('channelId')),
        eq(t.messages.authorId, ph('authorId')),
        eq(t.messages.nonce, ph('nonce')),
        gt(t.messages.createdAt, ph('since')),
      ),
    )
    .prepare(),
)
const messageInsert = prepared((d) =>
  d
    .insert(t.messages)
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
    .update(t.channels)
    .set({ lastMessageId: sql`${ph('lastMessageId')}` })
    .where(eq(t.channels.id, ph('id')))
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

export async function insertMessage(_tx: DB, row: typeof t.messages.$inferInsert): Promise<MessageRow> {
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
  return db().select().from(t.messages).where(eq(t.messages.id, id)).get()
}

/** A new message in the channel: its last_message_id. */
export async function setLastMessageId(_tx: DB, channelId: string, messageId: string): Promise<void> {
  channelRows.forget(channelId)
  await lastMessageSet().run({ id: channelId, lastMessageId: messageId })
}

export async function insertInvite(tx: DB, row: typeof t.invites.$inferInsert): Promise<InviteRow> {
  return tx.insert(t.invites).values(row).returning().get()
}

export async function deleteInviteRow(tx: DB, code: string): Promise<void> {
  await tx.delete(t.invites).where(eq(t.invites.code, code)).run()
}

// ---- one message: edits, deletions, pins, reactions. Each writer forgets the channel's pages.

/** The message if it is in this channel. */
export async function messageInChannel(channelId: string, id: string, tx: DB = db()): Promise<MessageRow | undefined> {
  return tx
    .select()
    .from(t.messages)
    .where(and(eq(t.messages.id, id), eq(t.messages.channelId, channelId)))
    .get()
}

/** Those of these messages that are in this channel. */
export async function messagesInChannel(channelId: string, ids: string[], tx: DB = db()): Promise<MessageRow[]> {
  return tx
    .select()
    .from(t.messages)
    .where(and(eq(t.messages.channelId, channelId), inArray(t.messages.id, ids)))
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
    .update(t.messages)
    .set(patch)
    .where(and(eq(t.messages.id, id), eq(t.messages.channelId, channelId)))
    .returning()
    .get()
}

/** Delete these messages of the channel (their reactions go with them); the ids that were there. */
export async function deleteMessageRows(tx: DB, channelId: string, ids: string[]): Promise<string[]> {
  if (!ids.length) return []
  messagePages.forget(channelId)
  return (
    await tx
      .delete(t.messages)
      .where(and(eq(t.messages.channelId, channelId), inArray(t.messages.id, ids)))
      .returning({ id: t.messages.id })
      .all()
  ).map((r) => r.id)
}

const isPinned = (channelId: string) => and(eq(t.messages.channelId, channelId), isNotNull(t.messages.pinnedAt))

/** The channel's pinned messages, the latest pinned first. */
export async function pinnedMessages(channelId: string): Promise<MessageRow[]> {
  return db().select().from(t.messages).where(isPinned(channelId)).orderBy(desc(t.messages.pinnedAt)).all()
}

export async function pinCount(channelId: string, tx: DB = db()): Promise<number> {
  return (await tx.select({ n: count() }).from(t.messages).where(isPinned(channelId)).get())?.n ?? 0
}

/** When the channel's latest pin was made (CHANNEL_PINS_UPDATE's last_pin_timestamp); null without pins. */
export async function lastPinAt(channelId: string, tx: DB = db()): Promise<number | null> {
  return (
    (
      await tx
        .select({ at: sql<number | null>`max(${t.messages.pinnedAt})` })
        .from(t.messages)
        .where(isPinned(channelId))
        .get()
    )?.at ?? null
  )
}

export type ReactionCount = { emoji: string; count: number; me: boolean }

// Per message and emoji: how many, whether the reader is among them, in the order each emoji was first used.
const reactionCountsOf = prepared((d) =>
  d
    .select({
      messageId: t.reactions.messageId,
      emoji: t.reactions.emoji,
      count: count(),
      me: sql<number | null>`max(CASE WHEN ${t.reactions.userId} = ${ph('userId')} THEN 1 ELSE 0 END)`,
    })
    .from(idsTable())
    .crossJoin(t.reactions)
    .where(eq(t.reactions.messageId, idValue))
    .groupBy(t.reactions.messageId, t.reactions.emoji)
    .orderBy(sql`min(${t.reactions.createdAt})`, t.reactions.emoji)
    .prepare(),
)

/** The reactions on these messages as the reader sees them (`me`; null: nobody's), in one query. */
export async function reactionCounts(
  messageIds: string[],
  readerId: string | null,
): Promise<Map<string, ReactionCount[]>> {
  const out = new Map<string, ReactionCount[]>()
  if (!messageIds.length) return out
  for (const r of await reactionCountsOf().all({ ids: JSON.stringify(messageIds), userId: readerId })) {
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
  const row = await tx
    .select({
      kinds: countDistinct(t.reactions.emoji),
      has: sql<number>`coalesce(max(CASE WHEN ${t.reactions.emoji} = ${emoji} THEN 1 ELSE 0 END), 0)`,
    })
    .from(t.reactions)
    .where(eq(t.reactions.messageId, messageId))
    .get()
  return { kinds: row?.kinds ?? 0, has: row?.has === 1 }
}

/** A user's reaction; false when it was already there. */
export async function insertReaction(
  tx: DB,
  channelId: string,
  row: typeof t.reactions.$inferInsert,
): Promise<boolean> {
  messagePages.forget(channelId)
  return (
    (await tx.insert(t.reactions).values(row).onConflictDoNothing().returning({ at: t.reactions.createdAt }).all())
      .length > 0
  )
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
    (
      await tx
        .delete(t.reactions)
        .where(and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji), eq(t.reactions.userId, userId)))
        .returning({ at: t.reactions.createdAt })
        .all()
    ).length > 0
  )
}

/** Remove every reaction on a message, or every one of an emoji; how many there were. */
export async function deleteReactions(tx: DB, channelId: string, messageId: string, emoji?: string): Promise<number> {
  messagePages.forget(channelId)
  const where = emoji
    ? and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji))
    : eq(t.reactions.messageId, messageId)
  return (await tx.delete(t.reactions).where(where).returning({ at: t.reactions.createdAt }).all()).length
}

/** The ids of the users who reacted with an emoji, by id, after a user id. */
export async function reactionUserIds(
  messageId: string,
  emoji: string,
  after: string,
  limit: number,
): Promise<string[]> {
  const byId = asInteger(t.reactions.userId)
  return (
    await db()
      .select({ userId: t.reactions.userId })
      .from(t.reactions)
      .where(and(eq(t.reactions.messageId, messageId), eq(t.reactions.emoji, emoji), gt(byId, asInteger(after))))
      .orderBy(byId)
      .limit(limit)
      .all()
  ).map((r) => r.userId)
}

// ---- Locks for count-then-write checks (db/client.ts lockForUpdate; nothing on SQLite)

/** Hold the channel's row until the transaction ends (its pin count is checked alone). */
export async function lockChannel(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.channels, t.channels.id, id)
}

/** Hold the message's row until the transaction ends (its count of reaction emoji is checked alone). */
export async function lockMessage(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.messages, t.messages.id, id)
}

/** One enforce_nonce send per channel, author and nonce at a time (the message it finds may not exist yet). */
export async function lockMessageNonce(tx: DB, channelId: string, authorId: string, nonce: string): Promise<void> {
  await lockName(tx, `message-nonce:${channelId}:${authorId}:${nonce}`)
}
