// Operators flag an account as compromised: every session ends, and login answers
// ACCOUNT_COMPROMISED_RESET_PASSWORD until the password is reset.
import { eq } from 'drizzle-orm'
import { db } from '../db/client'
import { events } from '../gateway/bus'
import { users } from '../accounts/tables'
import { deleteUserSessions } from '../accounts/sessions'

export async function lockUser(userId: string) {
  const updated = db().update(users).set({ compromised: true }).where(eq(users.id, userId)).returning({ id: users.id }).get()
  if (!updated) throw new Error(`no user with id ${userId}`)
  const ended = await deleteUserSessions(userId)
  events.closeUser(userId, 4004, 'Authentication failed')
  return { id: userId, locked: true, sessions_ended: ended.length }
}
