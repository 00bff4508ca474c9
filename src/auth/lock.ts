// Operators flag an account as compromised: every session ends, and login answers
// ACCOUNT_COMPROMISED_RESET_PASSWORD until the password is reset.
import { deleteUserSessions } from '../accounts/sessions'
import { updateUser } from '../accounts/store'
import { transaction } from '../db/client'
import { events } from '../gateway/bus'
import { revokeAuthorization } from '../oauth2/revocation'

export async function lockUser(userId: string) {
  return await transaction(async () => {
    const updated = await updateUser(userId, { compromised: true })
    if (!updated) throw new Error(`no user with id ${userId}`)
    const ended = await deleteUserSessions(userId)
    // Nothing of the account authenticates until the password is reset: its OAuth2 grants end too (the applications
    // ask the user again), and every socket closes, whatever it identified with.
    await revokeAuthorization(userId)
    events.closeUser(userId, 4004, 'Authentication failed')
    return { id: userId, locked: true, sessions_ended: ended.length }
  })
}

/**
 * Operators delete an account (`user delete`, a provisional account too): it is marked deleted (a person may still
 * undo it by logging in with `undelete`, as after their own deletion), and at once nothing of it authenticates: its
 * sessions, its OAuth2 tokens (a provisional account's included) and every socket, on every node (the bus).
 */
export async function deleteUser(userId: string) {
  return await transaction(async () => {
    const updated = await updateUser(userId, { state: 'deleted' })
    if (!updated) throw new Error(`no user with id ${userId}`)
    const ended = await deleteUserSessions(userId)
    const tokens = await revokeAuthorization(userId)
    events.closeUser(userId, 4004, 'Authentication failed')
    return { id: userId, deleted: true, sessions_ended: ended.length, tokens_ended: tokens }
  })
}
