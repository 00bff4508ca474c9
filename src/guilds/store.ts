// Every query of the guilds domain. Synchronous, as every store (docs/DESIGN.md, "Stores"): readers take the open
// transaction as an optional last `tx`, writers take it first.
import { and, asc, desc, eq, gt, sql } from 'drizzle-orm'
import { db, prepared, type DB } from '../db/client'
import { channels, guilds, invites, memberRoles, members, messages, roles, type ChannelRow, type GuildRow, type InviteRow, type MemberRow, type MessageRow, type RoleRow } from './tables'

const memberStmt = prepared((d) =>
  d.select().from(members).where(and(eq(members.guildId, sql.placeholder('guildId')), eq(members.userId, sql.placeholder('userId')))).prepare(),
)
const channelStmt = prepared((d) => d.select().from(channels).where(eq(channels.id, sql.placeholder('id'))).prepare())
const guildStmt = prepared((d) => d.select().from(guilds).where(eq(guilds.id, sql.placeholder('id'))).prepare())

export function getGuild(id: string): GuildRow | undefined {
  return guildStmt().get({ id })
}

export function getMember(guildId: string, userId: string): MemberRow | undefined {
  return memberStmt().get({ guildId, userId })
}

export function getChannelRow(id: string): ChannelRow | undefined {
  return channelStmt().get({ id })
}

export function guildRoles(guildId: string, tx: DB = db()): RoleRow[] {
  return tx.select().from(roles).where(eq(roles.guildId, guildId)).orderBy(asc(roles.position), asc(roles.id)).all()
}

export function getRole(guildId: string, roleId: string): RoleRow | undefined {
  return db().select().from(roles).where(and(eq(roles.guildId, guildId), eq(roles.id, roleId))).get()
}

export function memberRoleIds(guildId: string, userId: string, tx: DB = db()): string[] {
  return tx
    .select({ roleId: memberRoles.roleId })
    .from(memberRoles)
    .where(and(eq(memberRoles.guildId, guildId), eq(memberRoles.userId, userId)))
    .all()
    .map((r) => r.roleId)
}

export function guildMembers(guildId: string, limit = 1000, after = '0'): MemberRow[] {
  return db()
    .select()
    .from(members)
    .where(and(eq(members.guildId, guildId), gt(sql`CAST(${members.userId} AS INTEGER)`, sql`CAST(${after} AS INTEGER)`)))
    .orderBy(sql`CAST(${members.userId} AS INTEGER)`)
    .limit(limit)
    .all()
}

export function memberUserIds(guildId: string, tx: DB = db()): string[] {
  return tx.select({ id: members.userId }).from(members).where(eq(members.guildId, guildId)).all().map((r) => r.id)
}

export function memberCount(guildId: string, tx: DB = db()): number {
  return tx.select({ n: sql<number>`count(*)` }).from(members).where(eq(members.guildId, guildId)).get()!.n
}

export function guildsOfUser(userId: string): GuildRow[] {
  return db()
    .select({ g: guilds })
    .from(members)
    .innerJoin(guilds, eq(guilds.id, members.guildId))
    .where(eq(members.userId, userId))
    .orderBy(asc(guilds.id))
    .all()
    .map((r) => r.g)
}

export function guildChannels(guildId: string, tx: DB = db()): ChannelRow[] {
  return tx.select().from(channels).where(eq(channels.guildId, guildId)).orderBy(asc(channels.position), asc(channels.id)).all()
}

/** Newest first. `before`/`after` exclusive; `around` splits the limit on both sides. */
export function channelMessages(channelId: string, q: { limit: number; before?: string; after?: string; around?: string }): MessageRow[] {
  const byId = sql`CAST(${messages.id} AS INTEGER)`
  const base = eq(messages.channelId, channelId)
  if (q.around) {
    const half = Math.floor(q.limit / 2)
    const older = db().select().from(messages).where(and(base, sql`${byId} <= CAST(${q.around} AS INTEGER)`)).orderBy(desc(byId)).limit(q.limit - half).all()
    const newer = db().select().from(messages).where(and(base, sql`${byId} > CAST(${q.around} AS INTEGER)`)).orderBy(asc(byId)).limit(half).all()
    return [...newer.reverse(), ...older]
  }
  if (q.after && !q.before) {
    return db().select().from(messages).where(and(base, sql`${byId} > CAST(${q.after} AS INTEGER)`)).orderBy(asc(byId)).limit(q.limit).all().reverse()
  }
  const where = q.before ? and(base, sql`${byId} < CAST(${q.before} AS INTEGER)`) : base
  return db().select().from(messages).where(where).orderBy(desc(byId)).limit(q.limit).all()
}

export function getInvite(code: string): InviteRow | undefined {
  return db().select().from(invites).where(eq(invites.code, code)).get()
}

/** Count one use if the invite is still valid for this user; atomic, so parallel joins never exceed max_uses. */
export function claimInviteUse(code: string, now: number, userId: string): InviteRow | undefined {
  return db()
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
}

export function reusableInvite(channelId: string, inviterId: string, maxAge: number, maxUses: number, temporary: boolean, now: number): InviteRow | undefined {
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

// ---- writers

export function insertGuild(tx: DB, row: typeof guilds.$inferInsert): void {
  tx.insert(guilds).values(row).run()
}

export function updateGuild(tx: DB, id: string, patch: Partial<Omit<typeof guilds.$inferInsert, 'id'>>): void {
  tx.update(guilds).set(patch).where(eq(guilds.id, id)).run()
}

export function deleteGuildRow(tx: DB, id: string): void {
  tx.delete(guilds).where(eq(guilds.id, id)).run()
}

export function insertRole(tx: DB, row: typeof roles.$inferInsert): RoleRow {
  return tx.insert(roles).values(row).returning().get()
}

export function updateRoleRow(tx: DB, id: string, patch: Partial<Omit<typeof roles.$inferInsert, 'id'>>): RoleRow {
  return tx.update(roles).set(patch).where(eq(roles.id, id)).returning().get()
}

export function deleteRoleRow(tx: DB, id: string): void {
  tx.delete(roles).where(eq(roles.id, id)).run()
}

export function addMemberRole(tx: DB, guildId: string, userId: string, roleId: string): void {
  tx.insert(memberRoles).values({ guildId, userId, roleId }).onConflictDoNothing().run()
}

export function removeMemberRole(tx: DB, guildId: string, userId: string, roleId: string): void {
  tx.delete(memberRoles).where(and(eq(memberRoles.guildId, guildId), eq(memberRoles.userId, userId), eq(memberRoles.roleId, roleId))).run()
}

/** Add a member; undefined when the user already is one. */
export function insertMember(tx: DB, row: typeof members.$inferInsert): MemberRow | undefined {
  return tx.insert(members).values(row).onConflictDoNothing().returning().get()
}

/** Remove a member and the member's roles. */
export function deleteMember(tx: DB, guildId: string, userId: string): void {
  tx.delete(memberRoles).where(and(eq(memberRoles.guildId, guildId), eq(memberRoles.userId, userId))).run()
  tx.delete(members).where(and(eq(members.guildId, guildId), eq(members.userId, userId))).run()
}

export function insertChannel(tx: DB, row: typeof channels.$inferInsert): ChannelRow {
  return tx.insert(channels).values(row).returning().get()
}

export function updateChannelRow(tx: DB, id: string, patch: Partial<Omit<typeof channels.$inferInsert, 'id'>>): ChannelRow {
  return tx.update(channels).set(patch).where(eq(channels.id, id)).returning().get()
}

export function deleteChannelRow(tx: DB, id: string): void {
  tx.delete(channels).where(eq(channels.id, id)).run()
}

/** The author's message with this nonce in the channel since `since` (enforce_nonce). */
export function recentMessageWithNonce(tx: DB, channelId: string, authorId: string, nonce: string, since: number): MessageRow | undefined {
  return tx
    .select()
    .from(messages)
    .where(and(eq(messages.channelId, channelId), eq(messages.authorId, authorId), eq(messages.nonce, nonce), gt(messages.createdAt, since)))
    .get()
}

export function insertMessage(tx: DB, row: typeof messages.$inferInsert): MessageRow {
  return tx.insert(messages).values(row).returning().get()
}

export function insertInvite(tx: DB, row: typeof invites.$inferInsert): InviteRow {
  return tx.insert(invites).values(row).returning().get()
}

export function deleteInviteRow(tx: DB, code: string): void {
  tx.delete(invites).where(eq(invites.code, code)).run()
}
