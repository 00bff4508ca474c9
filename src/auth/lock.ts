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
