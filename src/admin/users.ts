// The console's users: search, one user's page (profile, factors without their secrets, sessions with client and
// location, lobbies, guilds, OAuth2 grants) and the actions on an account. Each action takes the same path as the
// API's or the CLI's (lock: auth/lock.ts, as `user lock`; its sockets close through the bus, so on every node) and
// is audited in the action's own transaction.
import { listSessions, endSessions, endSessionsByHash } from '../accounts/sessions'
import { cachedUser, searchUsers, updateUser } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { Errors } from '../core/errors'
import { transaction } from '../db/client'
import { lockUser } from '../auth/lock'
import { deactivateAccount } from '../auth/recovery'
import { resendVerification } from '../auth/register'
import { guildsOfUser } from '../guilds/store'
import { lobbyIdsOfUser } from '../lobbies/members-store'
import { cachedLobby } from '../lobbies/store'
import { FACTORS, registry } from '../mfa/factors'
import { findApplication, liveGrantsOfUser } from '../oauth2/store'
import { revokeAuthorization } from '../oauth2/revocation'
import { type Actor, audit } from './audit'
import { notOnSelf, reasonRequired } from './errors'
import { findOperator } from './store'

/** A user as the search lists it (no secret: no password hash, no token). */
export function userSummary(u: UserRow) {
  return {
    id: u.id,
    username: u.username,
    global_name: u.globalName,
    email: u.email,
    email_verified: u.emailVerified,
    phone: u.phone,
    bot: u.bot,
    state: u.state,
    locked: u.compromised,
    created_at: new Date(u.createdAt).toISOString(),
  }
}

export async function findUsers(query: string, limit: number) {
  return (await searchUsers(query, limit)).map(userSummary)
}

async function userOrThrow(userId: string): Promise<UserRow> {
  const user = /^\d{1,20}$/.test(userId) ? await cachedUser(userId) : undefined
  if (!user) throw Errors.unknownUser()
  return user
}

/** The user's page: everything an operator looks at before acting. */
export async function userPage(userId: string) {
  const user = await userOrThrow(userId)
  const factors: string[] = []
  for (const f of FACTORS) if (await f.enrolled(userId)) factors.push(f.type)
  const sessions = (await listSessions(userId)).map((s) => ({
    id_hash: s.idHash,
    created_at: new Date(s.createdAt).toISOString(),
    approx_last_used_time: new Date(s.lastUsedAt).toISOString(),
    client_info: { os: s.clientOs, platform: s.clientPlatform, location: s.clientLocation },
  }))
  const lobbies = []
  for (const id of await lobbyIdsOfUser(userId)) {
    const lobby = await cachedLobby(id)
    if (lobby) lobbies.push({ id, application_id: lobby.applicationId })
  }
  const guilds = (await guildsOfUser(userId)).map((g) => ({ id: g.id, name: g.name }))
  const grants = []
  for (const g of await liveGrantsOfUser(userId))
    grants.push({
      application_id: g.applicationId,
      application_name: (await findApplication(g.applicationId))?.name ?? null,
      scopes: g.scopes,
    })
  return {
    user: userSummary(user),
    operator: !!(await findOperator(userId)),
    mfa: { enabled: await registry.enabled(userId), factors },
    sessions,
    lobbies,
    guilds,
    oauth2_grants: grants,
  }
}

function needReason(reason: string | undefined): string {
  if (!reason?.trim()) throw reasonRequired()
  return reason.trim()
}

function notSelf(actor: Actor, userId: string) {
  if (actor.kind === 'operator' && actor.userId === userId) throw notOnSelf()
}

/** Lock (the CLI's `user lock`): sessions end, grants end, every socket closes on every node; login needs a reset. */
export async function lockAccount(actor: Actor, userId: string, reason: string | undefined) {
  const why = needReason(reason)
  notSelf(actor, userId)
  await userOrThrow(userId)
  return await transaction(async () => {
    const result = await lockUser(userId)
    await audit(actor, {
      action: 'user.lock',
      targetType: 'user',
      targetId: userId,
      reason: why,
      details: { sessions_ended: result.sessions_ended },
    })
    return result
  })
}

/** Unlock: the account may log in again with its password (no reset forced). */
export async function unlockAccount(actor: Actor, userId: string, reason: string | undefined) {
  await userOrThrow(userId)
  return await transaction(async () => {
    await updateUser(userId, { compromised: false })
    await audit(actor, { action: 'user.unlock', targetType: 'user', targetId: userId, reason })
    return { id: userId, locked: false }
  })
}

/** Log out some sessions (by their id hashes) or all of them; their sockets close. */
export async function logoutSessions(
  actor: Actor,
  userId: string,
  idHashes: string[] | undefined,
  reason: string | undefined,
) {
  await userOrThrow(userId)
  return await transaction(async () => {
    const ended = idHashes ? await endSessionsByHash(userId, idHashes) : await endSessions(userId)
    await audit(actor, {
      action: idHashes ? 'user.logout' : 'user.logout_all',
      targetType: 'user',
      targetId: userId,
      reason,
      details: { sessions_ended: ended, ...(idHashes ? { id_hashes: idHashes } : {}) },
    })
    return { sessions_ended: ended }
  })
}

/** Remove every second factor (after the operator checked the person out of band: the reason says how). */
export async function removeMfa(actor: Actor, userId: string, reason: string | undefined) {
  const why = needReason(reason)
  notSelf(actor, userId)
  await userOrThrow(userId)
  return await transaction(async () => {
    await registry.removeAll(userId)
    await registry.userChanged(userId)
    await audit(actor, { action: 'user.mfa_remove', targetType: 'user', targetId: userId, reason: why })
    return { id: userId, mfa_enabled: false }
  })
}

export async function resendUserVerification(actor: Actor, userId: string) {
  const user = await userOrThrow(userId)
  await resendVerification(userId)
  await audit(actor, { action: 'user.verification_resend', targetType: 'user', targetId: userId })
  return { id: userId, sent: !!user.email && !user.emailVerified }
}

/** Delete (as the owner's own deletion: scheduled, every session and grant ended). */
export async function deleteAccount(actor: Actor, userId: string, reason: string | undefined) {
  const why = needReason(reason)
  notSelf(actor, userId)
  await userOrThrow(userId)
  await transaction(async () => {
    await deactivateAccount(userId, 'deleted')
    await revokeAuthorization(userId)
    await audit(actor, { action: 'user.delete', targetType: 'user', targetId: userId, reason: why })
  })
  return { id: userId, state: 'deleted' }
}
