// Password recovery (forgot/reset) and account recovery (e-mail change with a revert link; revert).
import { eq } from 'drizzle-orm'
import type { UserCaller } from '../core/caller'
import { ApiError, formError } from '../core/errors'
import { sha256Hex } from '../core/crypto'
import { reserve } from '../core/ratelimit'
import { db, transaction } from '../db/client'
import { events } from '../gateway/bus'
import { mfaEnabled, hasSms, removeAllFactors, verifyFactor } from '../mfa/factors'
import { mfaChallengeFor, mfaLoginBody } from '../mfa/login'
import { invalidTicket, loadTicket, redeemTicket } from '../mfa/tickets'
import { users, type UserRow } from '../users/tables'
import type { ClientInfo } from './client-info'
import { completeLogin } from './complete-login'
import { findUserByLogin } from './login'
import { mailEmailChanged, mailNewEmailVerification, mailPasswordReset } from './mail'
import { issueOneTime, peekOneTime, redeemOneTime, revokeOneTime, type OneTimeRow } from './one-time'
import { hashPassword } from './passwords'
import { passwordProblem } from './password-policy'
import { VERIFY_EMAIL_TTL_MS } from './register'
import { blockPhonesOf, isE164, issuePhoneCode } from './phone'
import { deleteSession, endSessions, findSessionByToken } from './sessions'

export const RESET_TTL_MS = 3600_000
export const REVERT_TTL_MS = 2 * 24 * 3600_000
export const FORGOT_PER_IP = { limit: 10, windowMs: 3600_000 }
export const FORGOT_PER_LOGIN = { limit: 5, windowMs: 3600_000 }

const tokenInvalid = () => formError({ token: ['TOKEN_INVALID', 'Invalid or expired token.'] })

// Tokens whose new password is being hashed: the hash comes before the token is spent (so both commit together),
// and parallel requests with one token must not each pay for an argon2 hash; all but the first are refused.
const hashing = new Set<string>()
async function oneAtATime<T>(token: string, fn: () => Promise<T>): Promise<T> {
  const key = sha256Hex(token)
  if (hashing.has(key)) throw tokenInvalid()
  hashing.add(key)
  try {
    return await fn()
  } finally {
    hashing.delete(key)
  }
}

function checkNewPassword(password: string) {
  const problem = passwordProblem(password)
  if (problem) throw formError({ password: problem })
}

function mailResetLink(user: UserRow) {
  revokeOneTime(user.id, 'reset_password') // a new link replaces the old one
  // Not awaited: the answer takes the same time whether or not a mail goes out.
  void mailPasswordReset(user.email!, issueOneTime('reset_password', user.id, RESET_TTL_MS, { email: user.email! }))
}

/** POST /auth/forgot: e-mail → always 204; phone → 70007 with a code texted, or 70009 with the e-mail link. */
export async function forgotPassword(login: string, ip: string): Promise<void> {
  reserve(['forgot-ip', ip, FORGOT_PER_IP], ['forgot-login', login.trim().toLowerCase(), FORGOT_PER_LOGIN])
  const user = findUserByLogin(login)
  const usable = user && !user.bot && user.state !== 'disabled'
  if (!login.trim().startsWith('+')) {
    if (usable && user.email) mailResetLink(user)
    return
  }
  if (!isE164(login.trim())) throw formError({ login: ['PHONE_NUMBER_INVALID', 'Invalid phone number.'] })
  // A phone that is also the second factor cannot reset on its own: the reset goes by e-mail.
  if (usable && hasSms(user.id) && user.email) {
    mailResetLink(user)
    throw new ApiError(400, 70009, 'This phone number cannot be used to reset your password; a reset link was sent by e-mail')
  }
  if (usable) await issuePhoneCode(user.phone!, 'reset', ip, 'Your password reset code is')
  throw new ApiError(400, 70007, 'Phone verification is required')
}

/** The user a reset token (mailed link or verified reset phone) belongs to; peeked, not yet consumed. */
function resetTarget(token: string): { row: OneTimeRow; user: UserRow; purpose: 'reset_password' | 'phone' } {
  const mailed = peekOneTime('reset_password', token)
  if (mailed?.userId) {
    const user = db().select().from(users).where(eq(users.id, mailed.userId)).get()
    if (user) return { row: mailed, user, purpose: 'reset_password' }
  }
  const phone = peekOneTime('phone', token)
  if (phone?.data.purpose === 'reset' && phone.data.phone) {
    const user = db().select().from(users).where(eq(users.phone, phone.data.phone)).get()
    if (user) return { row: phone, user, purpose: 'phone' }
  }
  throw tokenInvalid()
}

export type ResetInput = { token: string; password: string; source?: string | null; method?: string; ticket?: string; code?: string }

/**
 * POST /auth/reset. Users with MFA first get the MFA-required body and repeat with ticket, method and code. On
 * success: the new password, every other session ended (their connections hear AUTH_SESSION_CHANGE, then close),
 * the caller's own connections moved to the new session, and a new token.
 */
export async function resetPassword(input: ResetInput, client: ClientInfo, current?: UserCaller) {
  checkNewPassword(input.password)
  const { user, purpose } = resetTarget(input.token)
  let ticket: ReturnType<typeof loadTicket> | undefined
  if (mfaEnabled(user.id)) {
    if (!input.ticket) return mfaLoginBody(user.id, (await mfaChallengeFor(user.id, 'reset', { token: sha256Hex(input.token) }))!)
    ticket = loadTicket('reset', input.ticket)
    if (ticket.userId !== user.id || ticket.data.token !== sha256Hex(input.token)) throw invalidTicket()
    await verifyFactor(ticket, input.method ?? 'totp', input.code)
  }
  // Hashed first, then the ticket and the token are spent in the transaction that sets the password: a crash
  // leaves either a usable token or the new password, never a spent token and the old password.
  const passwordHash = await oneAtATime(input.token, () => hashPassword(input.password))
  transaction(() => {
    if (ticket && !redeemTicket(ticket)) throw invalidTicket()
    if (!redeemOneTime(purpose, input.token)) throw tokenInvalid()
    db()
      .update(users)
      .set({ passwordHash, compromised: false, state: 'active', ...(purpose === 'reset_password' ? { emailVerified: true } : {}) })
      .where(eq(users.id, user.id))
      .run()
  })
  const fresh = db().select().from(users).where(eq(users.id, user.id)).get()!
  const login = await completeLogin(fresh, { client })
  const newSession = findSessionByToken(login.token)!
  if (current?.userId === user.id) {
    events.changeAuthSession(current.sessionId, { kind: 'user', userId: user.id, sessionId: newSession.id, sessionIdHash: newSession.idHash })
    await deleteSession(current.sessionId)
  }
  await endSessions(user.id, newSession.id, newSession.idHash)
  return { token: login.token, user_id: user.id, user_settings: login.user_settings }
}

/**
 * PATCH /users/@me {email}: change the address (unverified until its link is followed: the new address gets a
 * verification e-mail); the old one gets a two-day revert link. Caller is elevated.
 */
export async function changeEmail(user: UserRow, email: string): Promise<void> {
  const next = email.trim().toLowerCase()
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(next) || next.length > 254) throw formError({ email: ['EMAIL_TYPE_INVALID_EMAIL', 'Not a well formed email address.'] })
  if (next === user.email) return
  const taken = () => formError({ email: ['EMAIL_ALREADY_REGISTERED', 'Email is already registered.'] })
  if (db().select({ id: users.id }).from(users).where(eq(users.email, next)).get()) throw taken()
  // The new address and the old one's revert token commit together: no change without its way back.
  let revert: string | undefined
  let verify: string | undefined
  transaction(() => {
    try {
      db().update(users).set({ email: next, emailVerified: false }).where(eq(users.id, user.id)).run()
    } catch {
      throw taken() // taken at the same moment by another account
    }
    revokeOneTime(user.id, 'verify_email') // a link for an earlier address must not verify this one
    verify = issueOneTime('verify_email', user.id, VERIFY_EMAIL_TTL_MS, { email: next })
    if (user.email) revert = issueOneTime('revert_email', user.id, REVERT_TTL_MS, { email: user.email })
  })
  if (verify) await mailNewEmailVerification(next, verify)
  if (user.email && revert) await mailEmailChanged(user.email, next, revert)
}

/**
 * POST /auth/revert: the old e-mail back, the given password, no MFA, no phone (and its numbers blocked for good),
 * every session and gateway connection ended. The token works once.
 */
export async function revertAccount(token: string, password: string): Promise<{ email: string }> {
  checkNewPassword(password)
  const peeked = peekOneTime('revert_email', token)
  if (!peeked?.userId || !peeked.data.email) throw tokenInvalid()
  const holder = db().select({ id: users.id }).from(users).where(eq(users.email, peeked.data.email)).get()
  if (holder && holder.id !== peeked.userId) throw formError({ email: ['EMAIL_ALREADY_REGISTERED', 'Email is already registered.'] })
  // Hashed first, then the token is spent in the transaction that gives the account back: a crash leaves either a
  // usable token or the account restored, never a spent token and the account still in other hands.
  const passwordHash = await oneAtATime(token, () => hashPassword(password))
  const row = transaction(() => {
    const spent = redeemOneTime('revert_email', token)
    if (!spent?.userId) throw tokenInvalid()
    blockPhonesOf(spent.userId)
    db()
      .update(users)
      .set({ email: spent.data.email, emailVerified: true, passwordHash, phone: null, compromised: false })
      .where(eq(users.id, spent.userId))
      .run()
    removeAllFactors(spent.userId)
    revokeOneTime(spent.userId, 'revert_email')
    revokeOneTime(spent.userId, 'reset_password')
    revokeOneTime(spent.userId, 'verify_email')
    return spent as OneTimeRow & { userId: string }
  })
  const userId = row.userId
  await endSessions(userId)
  events.closeUser(userId, 4004, 'Authentication failed')
  return { email: row.data.email }
}

/**
 * The owner disables the account or schedules its deletion: every session ends at once (REST 401, Gateway 4004);
 * logging in again with `undelete: true` brings it back (20013 / 20011 otherwise).
 */
export async function deactivateAccount(userId: string, state: 'disabled' | 'deleted'): Promise<void> {
  db().update(users).set({ state }).where(eq(users.id, userId)).run()
  await endSessions(userId)
}
