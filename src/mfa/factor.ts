// The one shape of a second factor. Each factor is a folder under factors/ that exports one SecondFactor, and
// factors/index.ts lists them, strongest first; the login answer, POST /auth/mfa/<type>, elevation (60003 and
// /mfa/finish), a reset's code, authenticator_types, turning MFA off and the pages' factor step all iterate that list
// (registry.ts), so none of them names a factor.
import type { UserCaller } from '../core/caller'
import type { Endpoint } from '../http/endpoint'
import type { TicketRow } from './tickets'

/** A code's check: right, wrong, or 'used' (right but already accepted once: still a wrong guess, said so). */
export type Verdict = boolean | 'used'

/** How the pages ask for a method (login, password reset, the elevation dialog); web/ hands it to them. */
export type PagePrompt = {
  /** The choice: "Authenticator app". */
  label: string
  /** The field's label: "Six-digit code from your authenticator app" (none for an assertion). */
  prompt?: string
  /** digits or text: a code typed in; password: hidden; assertion: the browser signs the method's challenge. */
  input: 'digits' | 'text' | 'password' | 'assertion'
  /** The button, where it is not "Verify". */
  submit?: string
  /** A code is sent when asked for: POST /auth/mfa/<type>/send {ticket} → {phone} (the masked number). */
  send?: true
}

/** One way to answer an MFA ticket: a second factor, or the password of an account without MFA (password.ts). */
export type Method = {
  /** The wire name: POST /auth/mfa/<type>, /mfa/finish's `mfa_type`, a reset's `method`, `methods[].type`. */
  type: string
  page: PagePrompt
  /** Check a code (or an assertion) for the ticket's user: a wrong one answers false, it does not throw. */
  verify(ticket: TicketRow, code: string): Promise<Verdict>
  /** 60008's message for a wrong one, where it is not Discord's "Invalid two-factor code". */
  wrongCode?: string
}

/** The factors a user has on (by type), read once for an answer. */
export type Enrolment = ReadonlySet<string>

/** What the registry gives a factor's own routes. */
export type FactorRoutesContext = {
  /** MFA is on: a strong factor is enrolled. */
  enabled(userId: string): Promise<boolean>
  /** Throws 60003 (with a ticket and the methods) unless the request carries a fresh elevation. */
  requireElevation(caller: UserCaller, request: Request): Promise<void>
  /** After a strong factor went: with none left, MFA is off and the factors that only come on top go too. */
  dropDependents(userId: string): Promise<void>
  /**
   * Tell the user's sessions (USER_UPDATE) that the account changed: mfa_enabled, the phone. Called inside the
   * transaction of the change (Registry.userChanged).
   */
  userChanged(userId: string): Promise<void>
}

export type SecondFactor = Method & {
  /**
   * Discord's authenticator type (`authenticator_types`, READY's `auth`): 1 WebAuthn, 2 TOTP, 3 SMS; none for backup
   * codes. Asked with whether MFA is on by every GET /users/@me, which the registry answers from one cached read
   * (store.ts authenticatorTypes): that read knows this type's rows, and `enrolled` reads the same.
   */
  authenticatorType?: number
  /**
   * Turns MFA on by itself (authenticator app, security key). Otherwise it only comes on top of a strong one (SMS,
   * backup codes), is not offered at login without one, and goes with the last one.
   */
  strong: boolean
  /** It proves the account's phone: removing the phone removes it (elevated); the phone alone resets no password. */
  onPhone?: true
  enrolled(userId: string): Promise<boolean>
  /**
   * A challenge issued with each ticket of a user who has this factor (WebAuthn's assertion options): `ticket` is kept
   * on the ticket for `verify`, `wire` goes to the client. A ticket keeps one: at most one factor has a challenge.
   */
  challenge?(userId: string): Promise<{ ticket: string; wire: string }>
  /** Its field in the login answer (`{user_id, mfa, ticket, ...}`); without this, whether it is on. */
  login?(on: Enrolment, challenge: string | null): unknown
  /** Its entry in a 60003 answer's `methods`, or undefined; without this, `{type}` when it is on. */
  method?(on: Enrolment, challenge: string | null): Record<string, unknown> | undefined
  /** Remove it: MFA turned off, the phone removed (onPhone), the account reverted. */
  remove(userId: string): Promise<void>
  /** Its own routes (enrolment, removal, sending a code), mounted with the module's. */
  endpoints?(mfa: FactorRoutesContext): Endpoint[]
}
