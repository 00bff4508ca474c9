// User sessions: one per token. The token is returned once; only its hash is kept.
import { config } from '../config'
import type { Resolved, UserCaller } from '../core/caller'
import { clock } from '../core/clock'
import { transaction } from '../db/client'
import { ownedToken, randomToken, sha256Base64, sha256Hex } from '../core/crypto'
import { events, topics } from '../gateway/bus'
import {
  deleteSessionRow,
  deleteSessionsIdleSince,
  deleteSessionsOfUser,
  findActiveSessionByTokenHash,
  findSession,
  findSessionByTokenHash,
  insertSession,
  liveSessionIdsSince,
  sessionIdsByHash,
  sessionsOfUser,
  touchSessionAt,
} from './store'
import type { AuthSessionRow } from './tables'

export type SessionClient = {
  ip?: string
  os?: string | null
  platform?: string | null
  location?: string | null
  loginSource?: string | null
  giftCodeSkuId?: string | null
}

const TOUCH_EVERY_MS = 60_000

export async function createSession(
  userId: string,
  client: SessionClient = {},
): Promise<{ token: string; session: AuthSessionRow }> {
  const token = ownedToken(userId)
  const id = randomToken(16)
  const now = clock.now()
  const session = await insertSession({
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
  return { token, session }
}

function idleLimitMs(): number {
  return config().sessionIdleDays * 24 * 3600 * 1000
}

/** The session a user token belongs to, if it exists and has not idled out. */
export async function resolveUserToken(token: string): Promise<Resolved<UserCaller> | undefined> {
  const session = await findActiveSessionByTokenHash(sha256Hex(token))
  if (!session) return undefined
  const now = clock.now()
  if (now - session.lastUsedAt > idleLimitMs()) {
    await deleteSessionRow(session.id)
    return undefined
  }
  // approx_last_used_time is approximate on purpose: at most one write a minute per session.
  let lastUsedAt = session.lastUsedAt
  if (now - lastUsedAt > TOUCH_EVERY_MS) {
    await touchSessionAt(session.id, now)
    lastUsedAt = now
  }
  // Reused until the next touch is due (or the session would idle out): ending it forgets it at once (store).
  const until = Math.min(lastUsedAt + TOUCH_EVERY_MS, lastUsedAt + idleLimitMs()) + 1
  return {
    caller: { kind: 'user', userId: session.userId, sessionId: session.id, sessionIdHash: session.idHash },
    until,
  }
}

export async function deleteSession(id: string): Promise<void> {
  await deleteSessionRow(id)
}

/** A logout: the session's row goes and its gateway connections close, in one transaction (one outbox row with it). */
export async function endSession(id: string): Promise<void> {
  await transaction(async () => {
    await deleteSessionRow(id)
    events.closeAuthSession(id, 4004, 'Authentication failed')
  })
}

export async function listSessions(userId: string): Promise<AuthSessionRow[]> {
  return await sessionsOfUser(userId)
}

/** Remove sessions idle past the limit (run now and then by the server). */
export async function sweepIdleSessions(): Promise<number> {
  return await deleteSessionsIdleSince(clock.now() - idleLimitMs())
}

export async function deleteUserSessions(userId: string, exceptId?: string): Promise<string[]> {
  return await deleteSessionsOfUser(userId, exceptId)
}

/** Which of these sessions still exist, have not idled out, and belong to an active account. */
export async function liveSessionIds(ids: string[]): Promise<Set<string>> {
  return await liveSessionIdsSince(ids, clock.now() - idleLimitMs())
}

/** A new token for the caller in place of the current one (after an MFA change); its gateway connections follow. */
export async function replaceSession(caller: UserCaller): Promise<string> {
  return await transaction(async () => {
    const old = await findSession(caller.sessionId)
    const { token, session } = await createSession(caller.userId, {
      ip: old?.ip ?? undefined,
      os: old?.clientOs,
      platform: old?.clientPlatform,
      location: old?.clientLocation,
    })
    await deleteSession(caller.sessionId)
    events.changeAuthSession(caller.sessionId, {
      kind: 'user',
      userId: caller.userId,
      sessionId: session.id,
      sessionIdHash: session.idHash,
    })
    return token
  })
}

/**
 * End sessions of a user (all, or all but one) and close their gateway connections (in the deletes' transaction, or
 * the caller's). With `changedTo` (the hash of
 * the session that replaces them, after a password reset) each connection first hears AUTH_SESSION_CHANGE.
 */
export async function endSessions(userId: string, exceptId?: string, changedTo?: string): Promise<number> {
  return await transaction(async () => {
    const ended = await deleteUserSessions(userId, exceptId)
    for (const id of ended) {
      if (changedTo) events.publish(topics.session(id), 'AUTH_SESSION_CHANGE', { auth_session_id_hash: changedTo })
      events.closeAuthSession(id, 4004, 'Authentication failed')
    }
    return ended.length
  })
}

/** End the sessions with these id hashes (of this user only); returns how many ended. */
export async function endSessionsByHash(userId: string, idHashes: string[]): Promise<number> {
  return await transaction(async () => {
    const ids = await sessionIdsByHash(userId, idHashes)
    for (const id of ids) {
      await deleteSession(id)
      events.closeAuthSession(id, 4004, 'Authentication failed')
    }
    return ids.length
  })
}

export async function findSessionByToken(token: string): Promise<AuthSessionRow | undefined> {
  return await findSessionByTokenHash(sha256Hex(token))
}
