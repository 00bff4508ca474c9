// The account's phone as MFA sees it: set once verified, or removed with the factors that prove it; each change in one
// transaction with the account's USER_UPDATE (with several nodes, an outbox row of it).
import { phoneVerificationInvalid } from '../accounts/errors'
import { rememberPhone } from '../accounts/phone'
import { updateUser } from '../accounts/store'
import { transaction } from '../db/client'
import { uniqueViolation } from '../db/errors'
import type { SecondFactor } from './factor'
import type { Registry } from './registry'

/** Set the verified phone (another account taking it at the same moment: 50035 phone verification invalid). */
export async function setPhone(mfa: Registry, userId: string, phone: string): Promise<void> {
  await transaction(async () => {
    try {
      await updateUser(userId, { phone })
    } catch (error) {
      // another account took it at the same moment
      if (uniqueViolation(error) === 'users.phone') throw phoneVerificationInvalid()
      throw error
    }
    await rememberPhone(userId, phone)
    await mfa.userChanged(userId)
  })
}

/** Remove the phone and `onPhone`, the factors that prove it (the caller checked the elevation they need). */
export async function removePhone(mfa: Registry, userId: string, onPhone: readonly SecondFactor[]): Promise<void> {
  await transaction(async () => {
    for (const f of onPhone) await f.remove(userId)
    await updateUser(userId, { phone: null })
    await mfa.userChanged(userId)
  })
}
