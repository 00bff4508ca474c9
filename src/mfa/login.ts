// MFA at login: finishing a login with a second factor's code for the ticket POST /auth/login answered (the answer
// itself: registry.ts loginChallenge).
import { completeLogin, type LoginContext } from '../accounts/complete-login'
import { cachedUser } from '../accounts/store'
import { invalidTicket } from './errors'
import type { Registry } from './registry'
import { loadTicket, redeemTicket } from './tickets'

/** POST /auth/mfa/{type}: a right code for a live login ticket → a session, once. */
export async function finishMfaLogin(
  mfa: Registry,
  type: string,
  ticket: unknown,
  code: unknown,
  context: LoginContext,
) {
  const row = await loadTicket('login', ticket)
  await mfa.verify(row, type, code)
  if (!(await redeemTicket(row))) throw invalidTicket()
  const user = await cachedUser(row.userId!)
  if (!user || user.state !== 'active') throw invalidTicket()
  const requiredActions = row.data.required_actions ? row.data.required_actions.split(',') : []
  return completeLogin(user, context, requiredActions)
}
