// Ending OAuth2 grants: the tokens go, and so do the Gateway sessions that identified with them (close 4004) — a
// revoked token, a reused refresh token or code (theft), a user removing an application, an account lock. The closing
// is given inside the deleting transaction: it goes out once that commits (with several nodes, an outbox row of it).
import { isUserActive } from '../accounts/store'
import { transaction } from '../db/client'
import { events } from '../gateway/bus'
import { deleteApplicationRow, deleteFamily, deleteUserTokens, liveFamilies, setApplicationLocked } from './store'

const CLOSE = 4004

/** End a token family: every token of it, and its Gateway sessions. */
export async function revokeFamily(familyId: string): Promise<void> {
  await transaction(async () => {
    for (const userId of await deleteFamily(familyId)) events.closeGrants(userId, { familyId }, CLOSE)
  })
}

/** End what a user granted one application (or every application): its tokens and its Gateway sessions. */
export async function revokeAuthorization(userId: string, applicationId?: string): Promise<number> {
  return await transaction(async () => {
    const ended = await deleteUserTokens(userId, applicationId)
    events.closeGrants(userId, { applicationId: applicationId ?? '*' }, CLOSE)
    return ended
  })
}

/** Which of these token families still authenticate (a usable token, an active account that is not locked). */
export async function liveGrantFamilies(familyIds: string[]): Promise<Set<string>> {
  const alive = new Set<string>()
  const active = new Map<string, boolean>()
  for (const [familyId, userId] of await liveFamilies(familyIds)) {
    let ok = active.get(userId)
    if (ok === undefined) active.set(userId, (ok = await isUserActive(userId)))
    if (ok) alive.add(familyId)
  }
  return alive
}

/**
 * An operator locks an application (`app lock`): from its commit its Bot token and every OAuth2 token of it (its
 * provisional accounts' too) authenticate nothing, its token endpoints refuse it, and its bot's and its users' Gateway
 * sessions close (4004) on every node. Its rows stay: `app unlock` makes them work again. False: no such application.
 */
export async function setApplicationLock(applicationId: string, locked: boolean): Promise<boolean> {
  return await transaction(async () => {
    const held = await setApplicationLocked(applicationId, locked)
    if (!held) return false
    if (locked) {
      events.closeUser(held.botUserId, CLOSE, 'Authentication failed')
      for (const userId of held.userIds) events.closeGrants(userId, { applicationId }, CLOSE)
    }
    return true
  })
}

/**
 * The application's own rows go (provisional/app-delete.ts deletes what else it owns first, in the same transaction):
 * from its commit its bot's and its token holders' Gateway sessions close (4004), as for a lock. Answers its bot user;
 * undefined when there is none.
 */
export async function deleteApplication(applicationId: string): Promise<string | undefined> {
  return await transaction(async () => {
    const held = await deleteApplicationRow(applicationId)
    if (!held) return undefined
    events.closeUser(held.botUserId, CLOSE, 'Authentication failed')
    for (const userId of held.userIds) events.closeGrants(userId, { applicationId }, CLOSE)
    return held.botUserId
  })
}
