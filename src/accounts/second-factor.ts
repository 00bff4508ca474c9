// What the account flows need from second factors (login, password reset, account changes): whether a user has MFA,
// the "MFA required" body, finishing a reset with a code, elevation, removing every factor. mfa/ installs the
// implementation when it is mounted (as lobbies reach guilds through their port), so auth/ and mfa/ never import
// each other and both stand on accounts/.
import { appState } from '../core/app'
import type { UserCaller } from '../core/caller'

/**
 * POST /auth/login's answer for a user with MFA (a password reset answers it too): the ticket, and a field per second
 * factor (Discord's `totp`, `sms`, `backup`: whether it is on; `webauthn`: the challenge or null).
 */
export type MfaRequired = { user_id: string; mfa: true; ticket: string; [factor: string]: unknown }

export type SecondFactorHook = {
  /** MFA is on: an authenticator app or a security key (SMS and backup codes only come on top of those). */
  enabled(userId: string): Promise<boolean>
  /**
   * Discord's authenticator types the user has enabled (1 WebAuthn, 2 TOTP, 3 SMS), ascending: READY's
   * `auth.authenticator_types` and the private user's `authenticator_types`. Cached: answered without a query.
   */
  authenticatorTypes(userId: string): Promise<readonly number[]>
  /** Both `enabled` and `authenticatorTypes` in one call (GET /users/@me and READY show both; cached: no query). */
  state(userId: string): Promise<{ enabled: boolean; authenticatorTypes: readonly number[] }>
  /** A second factor proves the user's phone (SMS). */
  hasSms(userId: string): Promise<boolean>
  /** null for a user without MFA; otherwise the MFA-required body with a new ticket of `purpose` carrying `data`. */
  challenge(userId: string, purpose: 'login' | 'reset', data?: Record<string, string>): Promise<MfaRequired | null>
  /**
   * Check a code against a live ticket of `purpose` issued for `expected.userId` with `expected.data`. Throws 60006
   * (ticket), 60008 (code) or 429 (too many wrong codes). Answers the ticket's spender: call it in the transaction
   * that commits what the code allows; it throws 60006 when the ticket was used up meanwhile.
   */
  verify(
    purpose: 'reset',
    ticket: unknown,
    expected: { userId: string; data: Record<string, string> },
    method: string,
    code: unknown,
  ): Promise<() => Promise<void>>
  /** Throws 60003 (with a ticket and the methods) unless the request carries a valid elevation for this caller. */
  requireElevation(caller: UserCaller, request: Request): Promise<void>
  /** Remove every second factor (account revert). */
  removeAll(userId: string): Promise<void>
}

/** What this module holds per App (core/app.ts). */
const newSecondFactor = () => ({
  installed: undefined as SecondFactorHook | undefined,
})
declare module '../core/app' {
  interface AppState {
    secondFactor: ReturnType<typeof newSecondFactor>
  }
}
const held = appState('secondFactor', newSecondFactor)

export function installSecondFactor(next: SecondFactorHook): void {
  held().installed = next
}

/** The implementation mfa/ installed; fails closed (throws) when none is. */
export function secondFactor(): SecondFactorHook {
  const st = held()
  if (!st.installed) throw new Error('no second factor is installed: mount mfa/')
  return st.installed
}
