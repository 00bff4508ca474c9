// The account an mfa route acts for.
import type { UserRow } from '../accounts/tables'
import { cachedUser } from '../accounts/store'
import { Errors } from '../core/errors'

/** The caller's account (gone meanwhile: 401). */
export async function accountOf(userId: string): Promise<UserRow> {
  const user = await cachedUser(userId)
  if (!user) throw Errors.unauthorized()
  return user
}
