// Discord's user objects: the public one and the private one (@me).
import type { Caller } from '../core/caller'
import type { UserRow } from './tables'

export function publicUser(u: UserRow) {
  return {
    id: u.id,
    username: u.username,
    global_name: u.globalName,
    discriminator: u.discriminator,
    avatar: u.avatar,
    bot: u.bot,
    public_flags: u.flags,
  }
}

/**
 * The private user; `authenticatorTypes` (Discord's `authenticator_types`: 1 WebAuthn, 2 TOTP, 3 SMS) where the
 * caller may see them: GET /users/@me for user sessions and bots (never READY's user, as Discord, nor OAuth2).
 */
export function privateUser(u: UserRow, mfaEnabled = false, authenticatorTypes?: readonly number[]) {
  return {
    ...publicUser(u),
    email: u.email,
    verified: u.emailVerified,
    phone: u.phone,
    flags: u.flags,
    locale: u.locale,
    mfa_enabled: mfaEnabled,
    ...(authenticatorTypes ? { authenticator_types: authenticatorTypes } : {}),
  }
}

/**
 * The calling user as its credential may see it: OAuth2 tokens get `email` and `verified` only with the `email`
 * scope and never the phone (as Discord); user sessions and bots see everything.
 */
export function userForCaller(u: UserRow, caller: Caller, mfaEnabled = false) {
  const full = privateUser(u, mfaEnabled)
  if (caller.kind !== 'bearer') return full
  const { phone: _phone, email, verified, ...rest } = full
  return caller.scopes.includes('email') ? { ...rest, email, verified } : rest
}
