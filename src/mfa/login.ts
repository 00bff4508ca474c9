// MFA at login: the ticket and methods POST /auth/login answers for users with MFA, and finishing with a code.
import { completeLogin, type LoginContext } from '../accounts/complete-login'
import type { MfaRequired } from '../accounts/second-factor'
import { findUser } from '../accounts/store'
import { factorsOf, mfaEnabled, verifyFactor } from './factors'
import { invalidTicket } from './errors'
import { issueTicket, loadTicket, redeemTicket, type TicketPurpose } from './tickets'
import { authenticationOptions } from './webauthn'

export type MfaLoginChallenge = {
  ticket: string
  totp: boolean
  sms: boolean
  backup: boolean
  webauthn: string | null
}

/** null when the user has no MFA; otherwise a new ticket (of `purpose`) and the factors the user can answer with. */
export async function mfaChallengeFor(
  userId: string,
  purpose: TicketPurpose = 'login',
  data: Record<string, string> = {},
): Promise<MfaLoginChallenge | null> {
  if (!(await mfaEnabled(userId))) return null
  const f = await factorsOf(userId)
  const webauthn = f.webauthn ? await authenticationOptions(userId) : null
  const ticket = await issueTicket(purpose, userId, { challenge: webauthn?.challenge, data })
  return { ticket, totp: f.totp, sms: f.sms, backup: f.backup, webauthn: webauthn?.json ?? null }
}

/** The MFA-required login body (also answered by a password reset for users with MFA). */
export const mfaLoginBody = (userId: string, c: MfaLoginChallenge): MfaRequired => ({
  user_id: userId,
  mfa: true,
  ticket: c.ticket,
  totp: c.totp,
  sms: c.sms,
  backup: c.backup,
  webauthn: c.webauthn,
})

/** POST /auth/mfa/{type}: a right code for a live login ticket → a session, once. */
export async function finishMfaLogin(type: string, ticket: unknown, code: unknown, context: LoginContext) {
  const row = await loadTicket('login', ticket)
  await verifyFactor(row, type, code)
  if (!(await redeemTicket(row))) throw invalidTicket()
  const user = await findUser(row.userId!)
  if (!user || user.state !== 'active') throw invalidTicket()
  const requiredActions = row.data.required_actions ? row.data.required_actions.split(',') : []
  return await completeLogin(user, context, requiredActions)
}
