// Discord's user objects: the public one and the private one (@me).
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

export function privateUser(u: UserRow, mfaEnabled = false) {
  return {
    ...publicUser(u),
    email: u.email,
    verified: u.emailVerified,
    phone: u.phone,
    flags: u.flags,
    locale: u.locale,
    mfa_enabled: mfaEnabled,
  }
}
