// Who an mfa route acts for: the caller of a route declared `auth: 'user'` as the user session it is, and its account.
import type { UserRow } from '../accounts/tables'
import { findUser } from '../accounts/store'
import type { Caller, UserCaller } from '../core/caller'
import { Errors } from '../core/errors'

/** The rule let only user sessions through; the check keeps the type honest (as http/identity.ts's `user` macro). */
export function userCaller(caller: Caller): UserCaller {
  if (caller.kind !== 'user') throw Errors.unauthorized()
  return caller
}

/** The caller's account (gone meanwhile: 401). */
export function accountOf(userId: string): UserRow {
  const user = findUser(userId)
  if (!user) throw Errors.unauthorized()
  return user
}
