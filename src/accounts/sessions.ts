// User sessions: one per token. The token is returned once; only its hash is kept.
import { and, eq, inArray, lt, sql } from 'drizzle-orm'
import { config } from '../config'
import type { UserCaller } from '../core/caller'
import { clock } from '../core/clock'
import { ownedToken, randomToken, sha256Base64, sha256Hex } from '../core/crypto'
import { db, prepared } from '../db/client'
import { events, topics } from '../gateway/bus'
import { users } from './tables'
import { authSessions, type AuthSessionRow } from './tables'

export type SessionClient = {
  ip?: string
  os?: string | null
  platform?: string | null
  location?: string | null
  loginSource?: string | null
  giftCodeSkuId?: string | null
}

const TOUCH_EVERY_MS = 60_000

export async function createSession(userId: string, client: SessionClient = {}): Promise<{ token: string; session: AuthSessionRow }> {
  const token = ownedToken(userId)
  const id = randomToken(16)
  const now = clock.now()
  const session = db()
    .insert(authSessions)
    .values({
      id,
      userId,
      tokenHash: sha256Hex(token),
      idHash: sha256Base64(id),
      createdAt: now,
      lastUsedAt: now,
      ip: client.ip ?? null,
      clientOs: client.os ?? null,
      clientPlatform: client.platform ?? null,
      clientLocation: client.location ?? null,
      loginSource: client.loginSource ?? null,
      giftCodeSkuId: client.giftCodeSkuId ?? null,
    })
    .returning()
    .get()
  return { token, session }
}

const byTokenHash = prepared((d) => d.select().from(authSessions).where(eq(authSessions.tokenHash, sql.placeholder('hash'))).prepare())
// A token works only while its user is active: a disabled or deleted account stops at once, whoever changed it.
const activeByTokenHash = prepared((d) =>
  d
    .select({ id: authSessions.id, userId: authSessions.userId, idHash: authSessions.idHash, lastUsedAt: authSessions.lastUsedAt })
    .from(authSessions)
    .innerJoin(users, eq(users.id, authSessions.userId))
    .where(and(eq(authSessions.tokenHash, sql.placeholder('hash')), eq(users.state, 'active')))
    .prepare(),
)
const touch = prepared((d) =>
  d.update(authSessions).set({ lastUsedAt: sql`${sql.placeholder('now')}` }).where(eq(authSessions.id, sql.placeholder('id'))).prepare(),
)

function idleLimitMs(): number {
  return config().sessionIdleDays * 24 * 3600 * 1000
}

/** The session a user token belongs to, if it exists and has not idled out. */
export async function resolveUserToken(token: string): Promise<UserCaller | undefined> {
  const session = activeByTokenHash().get({ hash: sha256Hex(token) })
  if (!session) return undefined
  const now = clock.now()
  if (now - session.lastUsedAt > idleLimitMs()) {
    await deleteSession(session.id)
    return undefined
  }
  // approx_last_used_time is approximate on purpose: at most one write a minute per session.
  if (now - session.lastUsedAt > TOUCH_EVERY_MS) touch().run({ now, id: session.id })
  return { kind: 'user', userId: session.userId, sessionId: session.id, sessionIdHash: session.idHash }
}

export async function deleteSession(id: string): Promise<void> {
  db().delete(authSessions).where(eq(authSessions.id, id)).run()
}

export async function listSessions(userId: string): Promise<AuthSessionRow[]> {
  return db().select().from(authSessions).where(eq(authSessions.userId, userId)).all()
}

/** Remove sessions idle past the limit (run now and then by the server). */
export async function sweepIdleSessions(): Promise<number> {
  const removed = db().delete(authSessions).where(lt(authSessions.lastUsedAt, clock.now() - idleLimitMs())).returning({ id: authSessions.id }).all()
  return removed.length
}

export async function deleteUserSessions(userId: string, exceptId?: string): Promise<string[]> {
  const rows = db().select({ id: authSessions.id }).from(authSessions).where(eq(authSessions.userId, userId)).all()
  const ids = rows.map((r) => r.id).filter((id) => id !== exceptId)
  for (const id of ids) db().delete(authSessions).where(and(eq(authSessions.id, id), eq(authSessions.userId, userId))).run()
  return ids
}

/** Which of these sessions still exist, have not idled out, and belong to an active account. */
export function liveSessionIds(ids: string[]): Set<string> {
  const cutoff = clock.now() - idleLimitMs()
  const alive = new Set<string>()
  for (let i = 0; i < ids.length; i += 500) {
    const rows = db()
      .select({ id: authSessions.id, lastUsedAt: authSessions.lastUsedAt })
      .from(authSessions)
      .innerJoin(users, eq(users.id, authSessions.userId))
      .where(and(inArray(authSessions.id, ids.slice(i, i + 500)), eq(users.state, 'active')))
      .all()
    for (const r of rows) if (r.lastUsedAt >= cutoff) alive.add(r.id)
  }
  return alive
}

/** A new token for the caller in place of the current one (after an MFA change); its gateway connections follow. */
export async function replaceSession(caller: UserCaller): Promise<string> {
  const old = db().select().from(authSessions).where(eq(authSessions.id, caller.sessionId)).get()
  const { token, session } = await createSession(caller.userId, {
    ip: old?.ip ?? undefined,
    os: old?.clientOs,
    platform: old?.clientPlatform,
    location: old?.clientLocation,
  })
  await deleteSession(caller.sessionId)
  events.changeAuthSession(caller.sessionId, { kind: 'user', userId: caller.userId, sessionId: session.id, sessionIdHash: session.idHash })
  return token
}

/**
 * End sessions of a user (all, or all but one) and close their gateway connections. With `changedTo` (the hash of
 * the session that replaces them, after a password reset) each connection first hears AUTH_SESSION_CHANGE.
 */
export async function endSessions(userId: string, exceptId?: string, changedTo?: string): Promise<number> {
  const ended = await deleteUserSessions(userId, exceptId)
  for (const id of ended) {
    if (changedTo) events.publish(topics.session(id), 'AUTH_SESSION_CHANGE', { auth_session_id_hash: changedTo })
    events.closeAuthSession(id, 4004, 'Authentication failed')
  }
  return ended.length
}

/** End the sessions with these id hashes (of this user only); returns how many ended. */
export async function endSessionsByHash(userId: string, idHashes: string[]): Promise<number> {
  const rows = db().select({ id: authSessions.id }).from(authSessions).where(and(eq(authSessions.userId, userId), inArray(authSessions.idHash, idHashes))).all()
  for (const { id } of rows) {
    await deleteSession(id)
    events.closeAuthSession(id, 4004, 'Authentication failed')
  }
  return rows.length
}

export function findSessionByToken(token: string): AuthSessionRow | undefined {
  return byTokenHash().get({ hash: sha256Hex(token) })
}
