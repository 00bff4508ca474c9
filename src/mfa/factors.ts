// A user's second factors: which are enrolled, the methods to offer, and checking one code against a ticket.
import { isE164, issuePhoneCode, maskPhone, verifyPhoneCode } from '../accounts/phone'
import { verifyPassword } from '../accounts/passwords'
import { reserve } from '../core/ratelimit'
import { findUser } from '../accounts/store'
import { CODE_ALREADY_USED, smsNotEnabled } from './errors'
import { consumeBackupCode, hasBackupCodes, removeBackupCodes } from './backup-codes'
import { deleteSmsFactor, hasAuthenticator, hasSmsFactor } from './store'
import { MAX_WRONG_CODES, TICKET_TTL_MS, wrongCode, type TicketRow } from './tickets'
import { hasTotp, removeTotp, verifyTotp } from './totp'
import { hasWebauthn, removeAllCredentials, verifyAssertion } from './webauthn'

const MFA_TYPES = ['totp', 'sms', 'backup', 'webauthn', 'password'] as const
export type MfaType = (typeof MFA_TYPES)[number]
export type Factors = { totp: boolean; sms: boolean; backup: boolean; webauthn: boolean }

/** Wrong codes per user across tickets, so fresh tickets do not buy more guesses. */
const MFA_FAILURES_PER_USER = { limit: 20, windowMs: 15 * 60_000 }

export async function hasSms(userId: string): Promise<boolean> {
  return await hasSmsFactor(userId)
}

export async function factorsOf(userId: string): Promise<Factors> {
  return {
    totp: await hasTotp(userId),
    sms: await hasSms(userId),
    backup: await hasBackupCodes(userId),
    webauthn: await hasWebauthn(userId),
  }
}

/** MFA is on with an authenticator app or a security key; SMS and backup codes only ever come on top of those. */
export const mfaEnabled: (userId: string) => Promise<boolean> = hasAuthenticator

/** The methods of Discord's "MFA required" object, strongest first; password only for users without MFA. */
export async function methodsFor(userId: string, webauthnChallenge: string | null) {
  const f = await factorsOf(userId)
  const methods: Record<string, unknown>[] = []
  if (f.webauthn && webauthnChallenge) methods.push({ type: 'webauthn', challenge: webauthnChallenge })
  if (f.totp) methods.push({ type: 'totp', backup_codes_allowed: f.backup })
  if (f.sms) methods.push({ type: 'sms' })
  if (f.backup) methods.push({ type: 'backup' })
  if (!f.totp && !f.webauthn) methods.push({ type: 'password' })
  return methods
}

const smsPurpose = (row: TicketRow) => `mfa:${row.ticketHash.slice(0, 32)}` as const

/** Text a code for this ticket to the user's phone; returns the masked number. */
export async function sendTicketSms(row: TicketRow, ip: string): Promise<string> {
  const user = await findUser(row.userId!)
  if (!user?.phone || !isE164(user.phone) || !(await hasSms(user.id))) throw smsNotEnabled()
  await issuePhoneCode(user.phone, smsPurpose(row), ip, 'Your login code is')
  return maskPhone(user.phone)
}

/** true, false, or 'used': a TOTP code whose time step was already accepted (it still counts as a wrong code). */
async function codeMatches(row: TicketRow, type: MfaType, code: string): Promise<boolean | 'used'> {
  const userId = row.userId!
  switch (type) {
    case 'totp': {
      const totp = await verifyTotp(userId, code)
      if (totp !== 'wrong') return totp === 'ok' || 'used'
      // Discord's totp method also takes a backup code when backup_codes_allowed.
      return (await hasTotp(userId)) && (await consumeBackupCode(userId, code))
    }
    case 'backup':
      return consumeBackupCode(userId, code)
    case 'sms': {
      const phone = (await findUser(userId))?.phone
      return !!phone && (await hasSms(userId)) && (await verifyPhoneCode(phone, code, smsPurpose(row)))
    }
    case 'webauthn':
      return !!row.challenge && !!(await verifyAssertion(code, row.challenge, userId))
    case 'password': {
      if (await mfaEnabled(userId)) return false
      const hash = (await findUser(userId))?.passwordHash
      return !!hash && verifyPassword(code, hash)
    }
  }
}

/** Check a code for a ticket's user; a wrong one counts against the ticket and the user (60008, then 429). */
export async function verifyFactor(row: TicketRow, type: string, code: unknown): Promise<void> {
  if (!MFA_TYPES.includes(type as MfaType)) throw await wrongCode(row)
  const userId = row.userId!
  // Counted before the (async) check, so parallel guesses cannot outrun the ticket's or the user's allowance.
  const attempt = reserve(
    ['mfa-user', userId, MFA_FAILURES_PER_USER],
    ['mfa-ticket', row.ticketHash, { limit: MAX_WRONG_CODES, windowMs: TICKET_TTL_MS }],
  )
  const ok =
    typeof code === 'string' &&
    code.length > 0 &&
    code.length <= 64 * 1024 &&
    (await codeMatches(row, type as MfaType, code))
  if (ok === 'used') throw await wrongCode(row, CODE_ALREADY_USED)
  if (!ok) throw await wrongCode(row, type === 'password' ? 'Password does not match' : undefined)
  attempt.release()
}

/** Remove every second factor (account revert). */
export async function removeAllFactors(userId: string): Promise<void> {
  await removeTotp(userId)
  await removeBackupCodes(userId)
  await removeAllCredentials(userId)
  await deleteSmsFactor(userId)
}
