// The password as a method: an account without MFA proves itself with it where a 60003 answer asks (POST /mfa/finish).
// Not a second factor: nothing to enrol or remove, never offered at login, refused once MFA is on.
import { verifyPassword } from '../accounts/passwords'
import { cachedUser } from '../accounts/store'
import type { Method } from './factor'

export const PASSWORD = 'password'

/** The method, for a registry whose `enabled` says when it no longer counts. */
export function passwordMethod(enabled: (userId: string) => Promise<boolean>): Method {
  return {
    type: PASSWORD,
    page: { label: 'Password', prompt: 'Your password', input: 'password' },
    wrongCode: 'Password does not match',
    async verify(ticket, code) {
      const userId = ticket.userId!
      if (await enabled(userId)) return false
      const hash = (await cachedUser(userId))?.passwordHash
      return !!hash && verifyPassword(code, hash)
    },
  }
}
