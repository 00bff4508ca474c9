// The guilds domain's queries, async as every store (docs/DESIGN.md, "Stores are async"), in five files: this one
// holds the guilds, their channels, roles and members (what a channel request reads to decide access, and READY), and
// what the others share (the tables `t`, the caches); messages-store.ts the channels' messages and pins,
// reactions-store.ts the reactions, invites-store.ts the invites, bans-store.ts the bans. Readers take the open
// transaction as an optional last `tx`, writers take it first. The statements of the hot paths (channel access, a
// page of messages, posting one, READY) are prepared once per connection and run on the connection of the caller's
// scope (inside a transaction, the write connection).
import { and, asc, count, eq, getTableColumns, gt, inArray, sql } from 'drizzle-orm'
import { PageCache, rowCache } from '../db/cache'
import { andThen, asInteger, type DB, db, idsTable, idValue, lockForUpdate, prepared } from '../db/client'
import { dialectTables } from '../db/dialect-tables'
import * as sqliteTables from './tables'
import type { ChannelRow, GuildChannelRow, GuildRow, MemberRow, RoleRow } from './tables'

// This store's tables: SQLite's, or the PostgreSQL mirror once the server runs on it (db/client.ts).
const t = dialectTables(sqliteTables)
// The other store files of the domain reach the tables through this one `t`.
export { t }

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
export const channelRows = rowCache<string, ChannelRow>('channels', 4096)
const memberRows = rowCache<string, MemberRow>('guild-members', 8192)
const roleLists = rowCache<string, RoleRow[]>('guild-roles', 1024)
const memberRoleLists = rowCache<string, string[]>('guild-member-roles', 8192)
const memberKey = (guildId: string, userId: string) => `${guildId} ${userId}`

// Pages of GET /channels/{id}/messages as sent (JSON text), per channel and query. A message written to the channel,
// or the channel's or guild's deletion, forgets the channel's pages; a page made before a user row changed (an author
// renamed) is made again (db/cache.ts has the rules).
export const messagePages = new PageCache('channel-message-pages', 1024, 32, 64 * 1024 * 1024)

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

export async function cachedGuildRoles(guildId: string): Promise<RoleRow[]> {
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
  if (!guildIds.length) return new Map()
  return byGuild((await channelsOfGuilds().all({ ids: JSON.stringify(guildIds) })) as GuildChannelRow[])
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

export async function cachedMemberRoleIds(guildId: string, userId: string): Promise<string[]> {
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

export async function memberCount(guildId: string): Promise<number> {
  return (await memberCountOf().get({ guildId }))?.n ?? 0
}

export async function guildsOfUser(userId: string): Promise<GuildRow[]> {
  return (await membershipsOf().all({ userId })).map((r) => r.guild)
}

export async function guildChannels(guildId: string): Promise<ChannelRow[]> {
  return channelsOf().all({ guildId })
}

const sharedGuild = prepared((d) =>
  d
    .select({ guildId: t.members.guildId })
    .from(t.members)
    .where(
      and(
        eq(t.members.userId, ph('a')),
        inArray(
          t.members.guildId,
          d
            .select({ id: t.members.guildId })
            .from(t.members)
            .where(eq(t.members.userId, ph('b'))),
        ),
      ),
    )
    .limit(1)
    .prepare(),
)

/** Whether two users are members of one guild (a DM between them is allowed; a bot's DM needs it). */
export async function shareAGuild(a: string, b: string): Promise<boolean> {
  return (await sharedGuild().get({ a, b })) !== undefined
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

// ---- Locks for count-then-write checks (db/client.ts lockForUpdate; nothing on SQLite)

/** Hold the channel's row until the transaction ends (its pin count is checked alone). */
export async function lockChannel(tx: DB, id: string): Promise<void> {
  await lockForUpdate(tx, t.channels, t.channels.id, id)
}
