// Every query of the guilds domain. Synchronous (bun:sqlite) so they compose inside transactions; `d` is the
// database or the open transaction.
import { and, asc, desc, eq, gt, inArray, lt, sql } from 'drizzle-orm'
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

export function guildRoles(guildId: string, d: DB = db()): RoleRow[] {
  return d.select().from(roles).where(eq(roles.guildId, guildId)).orderBy(asc(roles.position), asc(roles.id)).all()
}

export function getRole(guildId: string, roleId: string): RoleRow | undefined {
  return db().select().from(roles).where(and(eq(roles.guildId, guildId), eq(roles.id, roleId))).get()
}

export function memberRoleIds(guildId: string, userId: string, d: DB = db()): string[] {
  return d
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

export function memberUserIds(guildId: string): string[] {
  return db().select({ id: members.userId }).from(members).where(eq(members.guildId, guildId)).all().map((r) => r.id)
}

export function memberCount(guildId: string, d: DB = db()): number {
  return d.select({ n: sql<number>`count(*)` }).from(members).where(eq(members.guildId, guildId)).get()!.n
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

export function guildChannels(guildId: string, d: DB = db()): ChannelRow[] {
  return d.select().from(channels).where(eq(channels.guildId, guildId)).orderBy(asc(channels.position), asc(channels.id)).all()
}

export function getMessage(channelId: string, id: string): MessageRow | undefined {
  return db().select().from(messages).where(and(eq(messages.channelId, channelId), eq(messages.id, id))).get()
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

export function deleteExpiredInvites(now: number): void {
  db().delete(invites).where(lt(invites.expiresAt, now)).run()
}

export function rolesByIds(ids: string[]): RoleRow[] {
  return ids.length ? db().select().from(roles).where(inArray(roles.id, ids)).all() : []
}
