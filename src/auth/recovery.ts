// Password recovery (forgot/reset) and account recovery (e-mail change with a revert link; revert).
import { uniqueViolation } from '../db/errors'
import { appState } from '../core/app'
import type { UserCaller } from '../core/caller'
import { Errors } from '../core/errors'
import { sha256Hex } from '../core/crypto'
import { perIp, reserve } from '../core/ratelimit'
import { transaction } from '../db/client'
import { audiences, events, topics } from '../gateway/bus'
import { cachedUser, findUserByEmail, findUserByPhone, updateUser } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import { isProvisional } from '../accounts/provisional'
import type { ClientInfo } from '../accounts/client-info'
import { completeLogin } from '../accounts/complete-login'
import { passwordRefused, phoneNumberInvalid } from '../accounts/errors'
import { secondFactor } from '../accounts/second-factor'
import { profileChanged } from '../accounts/profile-hooks'
import { findUserByLogin } from './login'
import { emailInvalid, emailTaken, phoneResetByEmail, phoneVerificationRequired, tokenInvalid } from './errors'
import { mailEmailChanged, mailNewEmailVerification, mailPasswordReset } from './mail'
import { VERIFY_EMAIL_TTL_MS } from './register'
import type { ResetInput } from './schemas'
import { issueOneTime, peekOneTime, redeemOneTime, revokeOneTime, type OneTimeRow } from '../accounts/one-time'
import { hashPassword } from '../accounts/passwords'
import { passwordProblem } from '../accounts/password-policy'
import { blockPhonesOf, isE164, issuePhoneCode } from '../accounts/phone'
import { deleteSession, endSessions, findSessionByToken, replaceSession } from '../accounts/sessions'
import { privateUser } from '../accounts/serialize'

const RESET_TTL_MS = 3600_000
const REVERT_TTL_MS = 2 * 24 * 3600_000
const FORGOT_PER_IP = { limit: 10, windowMs: 3600_000 }
const FORGOT_PER_LOGIN = { limit: 5, windowMs: 3600_000 }
/** Checks of reset tokens per IP (an IPv6 client by its /64): a page load each; guessing a token is hopeless anyway. */
const RESET_CHECK_PER_IP = { limit: 30, windowMs: 10 * 60_000 }

/** What this module holds per App (core/app.ts). */
const newRecovery = () => ({
  // Tokens whose new password is being hashed: the hash comes before the token is spent (so both commit together),
  // and parallel requests with one token must not each pay for an argon2 hash; all but the first are refused.
  hashing: new Set<string>(),
})
declare module '../core/app' {
  interface AppState {
    recovery: ReturnType<typeof newRecovery>
  }
}
const held = appState('recovery', newRecovery)
async function oneAtATime<T>(token: string, fn: () => Promise<T>): Promise<T> {
  const st = held()
  const key = sha256Hex(token)
  if (st.hashing.has(key)) throw tokenInvalid()
  st.hashing.add(key)
  try {
    return await fn()
  } finally {
    st.hashing.delete(key)
  }
}

function checkNewPassword(password: string) {
  const problem = passwordProblem(password)
  if (problem) throw passwordRefused('password', problem)
}

async function mailResetLink(user: UserRow) {
  // The link and its mail commit together (a kill after the 204 cannot keep one without the other); with a
  // transport, the mail is handed over after the COMMIT without holding up the answer.
  await transaction(async () => {
    await revokeOneTime(user.id, 'reset_password') // a new link replaces the old one
    const token = await issueOneTime('reset_password', user.id, RESET_TTL_MS, { email: user.email! })
    await mailPasswordReset(user.email!, token)
  })
}

/** POST /auth/forgot: e-mail → always 204; phone → 70007 with a code texted, or 70009 with the e-mail link. */
export async function forgotPassword(login: string, ip: string): Promise<void> {
  await reserve(perIp('forgot-ip', ip, FORGOT_PER_IP), ['forgot-login', login.trim().toLowerCase(), FORGOT_PER_LOGIN])
  const user = await findUserByLogin(login)
  const usable = user && !user.bot && user.state !== 'disabled'
  if (!login.trim().startsWith('+')) {
    if (usable && user.email) await mailResetLink(user)
    return
  }
  if (!isE164(login.trim())) throw phoneNumberInvalid('login')
  // A phone that is also the second factor cannot reset on its own: the reset goes by e-mail.
  if (usable && (await secondFactor().hasSms(user.id)) && user.email) {
    await mailResetLink(user)
    throw phoneResetByEmail()
  }
  if (usable) await issuePhoneCode(user.phone!, 'reset', ip, 'Your password reset code is')
  throw phoneVerificationRequired()
}

/** The user a reset token (mailed link or verified reset phone) belongs to; peeked, not yet consumed. */
async function resetTarget(
  token: string,
): Promise<{ row: OneTimeRow; user: UserRow; purpose: 'reset_password' | 'phone' }> {
  const mailed = await peekOneTime('reset_password', token)
  if (mailed?.userId) {
    const user = await cachedUser(mailed.userId)
    if (user) return { row: mailed, user, purpose: 'reset_password' }
  }
  const phone = await peekOneTime('phone', token)
  if (phone?.data.purpose === 'reset' && phone.data.phone) {
    const user = await findUserByPhone(phone.data.phone)
    if (user) return { row: phone, user, purpose: 'phone' }
  }
  throw tokenInvalid()
}

/**
 * POST /auth/reset/check: whether a reset token would still be taken (204), or is unknown, used or expired (400,
 * the same body /auth/reset answers), without spending it and without saying whose it is. Counted per IP.
 */
export async function checkResetToken(token: string, ip: string): Promise<void> {
  await reserve(perIp('reset-check-ip', ip, RESET_CHECK_PER_IP))
  await resetTarget(token)
}

/**
 * POST /auth/reset. Users with MFA first get the MFA-required body and repeat with ticket, method and code. On
 * success: the new password, every other session ended (their connections hear AUTH_SESSION_CHANGE, then close),
 * the caller's own connections moved to the new session, and a new token.
 */
export async function resetPassword(input: ResetInput, client: ClientInfo, current?: UserCaller) {
  checkNewPassword(input.password)
  const { user, purpose } = await resetTarget(input.token)
  const mfa = secondFactor()
  let spendTicket: (() => Promise<void>) | undefined
  if (await mfa.enabled(user.id)) {
    if (!input.ticket) return (await mfa.challenge(user.id, 'reset', { token: sha256Hex(input.token) }))!
    spendTicket = await mfa.verify(
      'reset',
      input.ticket,
      { userId: user.id, data: { token: sha256Hex(input.token) } },
      input.method ?? 'totp',
      input.code,
    )
  }
  // Hashed first, then the ticket and the token are spent in the transaction that sets the password: a crash
  // leaves either a usable token or the new password, never a spent token and the old password.
  const passwordHash = await oneAtATime(input.token, () => hashPassword(input.password))
  await transaction(async () => {
    await spendTicket?.()
    if (!(await redeemOneTime(purpose, input.token))) throw tokenInvalid()
    await updateUser(user.id, {
      passwordHash,
      compromised: false,
      state: 'active',
      ...(purpose === 'reset_password' ? { emailVerified: true } : {}),
    })
  })
  const fresh = (await cachedUser(user.id))!
  const login = await completeLogin(fresh, { client })
  const newSession = (await findSessionByToken(login.token))!
  // The caller's connections move and the others end in one transaction with the sessions' deletes.
  await transaction(async () => {
    if (current?.userId === user.id) {
      events.changeAuthSession(current.sessionId, {
        kind: 'user',
        userId: user.id,
        sessionId: newSession.id,
        sessionIdHash: newSession.idHash,
      })
      await deleteSession(current.sessionId)
    }
    await endSessions(user.id, newSession.id, newSession.idHash)
  })
  return { token: login.token, user_id: user.id, user_settings: login.user_settings }
}

/**
 * PATCH /users/@me {email}: change the address (unverified until its link is followed: the new address gets a
 * verification e-mail); the old one gets a two-day revert link. Caller is elevated.
 */
export async function changeEmail(user: UserRow, email: string): Promise<void> {
  const next = email.trim().toLowerCase()
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(next) || next.length > 254) throw emailInvalid()
  if (next === user.email) return
  if (await findUserByEmail(next)) throw emailTaken()
  // The new address, the old one's revert token and its mail commit together: no change without its way back.
  await transaction(async () => {
    try {
      await updateUser(user.id, { email: next, emailVerified: false })
    } catch (error) {
      if (uniqueViolation(error) === 'users.email') throw emailTaken() // taken at the same moment by another account
      throw error
    }
    await revokeOneTime(user.id, 'verify_email') // a link for an earlier address must not verify this one
    const verify = await issueOneTime('verify_email', user.id, VERIFY_EMAIL_TTL_MS, { email: next })
    await mailNewEmailVerification(next, verify)
    // The revert link's mail is a row of the same transaction: a crash cannot keep the change and lose the link.
    if (user.email) {
      const revert = await issueOneTime('revert_email', user.id, REVERT_TTL_MS, { email: user.email })
      await mailEmailChanged(user.email, next, revert)
    }
  })
}

/**
 * POST /auth/revert: the old e-mail back, the given password, no MFA, no phone (and its numbers blocked for good),
 * every session and gateway connection ended. The token works once.
 */
export async function revertAccount(token: string, password: string): Promise<{ email: string }> {
  checkNewPassword(password)
  const peeked = await peekOneTime('revert_email', token)
  if (!peeked?.userId || !peeked.data.email) throw tokenInvalid()
  const holder = await findUserByEmail(peeked.data.email)
  if (holder && holder.id !== peeked.userId) throw emailTaken()
  // Hashed first, then the token is spent in the transaction that gives the account back: a crash leaves either a
  // usable token or the account restored, never a spent token and the account still in other hands.
  const passwordHash = await oneAtATime(token, () => hashPassword(password))
  const row = await transaction(async () => {
    const spent = await redeemOneTime('revert_email', token)
    if (!spent?.userId) throw tokenInvalid()
    await blockPhonesOf(spent.userId)
    await updateUser(spent.userId, {
      email: spent.data.email,
      emailVerified: true,
      passwordHash,
      phone: null,
      compromised: false,
    })
    await secondFactor().removeAll(spent.userId)
    await revokeOneTime(spent.userId, 'revert_email')
    await revokeOneTime(spent.userId, 'reset_password')
    await revokeOneTime(spent.userId, 'verify_email')
    await endSessions(spent.userId)
    events.closeUser(spent.userId, 4004, 'Authentication failed')
    return spent as OneTimeRow & { userId: string }
  })
  return { email: row.data.email }
}

/**
 * The owner disables the account or schedules its deletion: every session ends at once (REST 401, Gateway 4004);
 * logging in again with `undelete: true` brings it back (20013 / 20011 otherwise).
 */
export async function deactivateAccount(userId: string, state: 'disabled' | 'deleted'): Promise<void> {
  await transaction(async () => {
    await updateUser(userId, { state })
    await endSessions(userId)
  })
}

/**
 * PATCH /users/@me {new_password} (the current password confirmed): the new hash, every other session ended, and
 * this one continued under a new token (returned), in one transaction.
 */
export async function changePassword(me: UserCaller, password: string): Promise<string> {
  const problem = passwordProblem(password)
  if (problem) throw passwordRefused('new_password', problem)
  const passwordHash = await hashPassword(password)
  return await transaction(async () => {
    await updateUser(me.userId, { passwordHash })
    await endSessions(me.userId, me.sessionId)
    return await replaceSession(me)
  })
}

/** PATCH /users/@me's last step: the display name (when given) and USER_UPDATE to the user's sessions, together. */
export async function saveProfile(userId: string, globalName: string | null | undefined) {
  return await transaction(async () => {
    if (globalName !== undefined) await updateUser(userId, { globalName: globalName?.trim() || null })
    const view = privateUser((await cachedUser(userId))!, await secondFactor().enabled(userId))
    events.publish(topics.account(userId), 'USER_UPDATE', view)
    // USER_UPDATE is the user's own; friends and lobby-mates get PRESENCE_UPDATE with the new user (as Discord).
    if (globalName !== undefined) await profileChanged(userId)
    return view
  })
}

/**
 * PATCH /users/@me with a provisional account's Bearer token: its display name, nothing else (no password, no e-mail
 * to change); a full account's token of that scope changes nothing (403 50001). Its own sessions of the application
 * get USER_UPDATE (an OAuth2 session follows no account topic, so it is told as the lobby audience is).
 */
export async function saveProvisionalName(
  caller: { userId: string; applicationId: string },
  body: { global_name?: string | null; email?: string; password?: string; new_password?: string },
) {
  const user = await cachedUser(caller.userId)
  if (!user || !isProvisional(user)) throw Errors.missingAccess()
  if (body.email !== undefined || body.password !== undefined || body.new_password !== undefined)
    throw Errors.missingAccess()
  const {
    email: _email,
    phone: _phone,
    verified: _verified,
    ...view
  } = await saveProfile(caller.userId, body.global_name)
  events.publishToUser(caller.userId, audiences.lobby(caller.applicationId), 'USER_UPDATE', view)
  return view
}
