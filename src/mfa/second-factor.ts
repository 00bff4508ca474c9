// mfa's side of the hook the account flows call (accounts/second-factor.ts): installed when mfa/ is mounted.
import type { SecondFactor } from '../accounts/second-factor'
import { requireElevation } from './elevation'
import { hasSms, mfaEnabled, removeAllFactors, verifyFactor } from './factors'
import { mfaChallengeFor, mfaLoginBody } from './login'
import { invalidTicket } from './errors'
import { authenticatorTypes, factors } from './store'
import { loadTicket, redeemTicket } from './tickets'

export const secondFactorForAccounts: SecondFactor = {
  enabled: mfaEnabled,
  authenticatorTypes,
  factors,
  hasSms,
  async challenge(userId, purpose, data = {}) {
    const challenge = await mfaChallengeFor(userId, purpose, data)
    return challenge && mfaLoginBody(userId, challenge)
  },
  async verify(purpose, ticket, expected, method, code) {
    const row = await loadTicket(purpose, ticket)
    if (row.userId !== expected.userId || Object.entries(expected.data).some(([key, value]) => row.data[key] !== value))
      throw invalidTicket()
    await verifyFactor(row, method, code)
    return async () => {
      if (!(await redeemTicket(row))) throw invalidTicket()
    }
  },
  requireElevation,
  removeAll: removeAllFactors,
}
