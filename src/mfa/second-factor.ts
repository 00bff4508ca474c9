// mfa's side of the hook the account flows call (accounts/second-factor.ts): installed when mfa/ is mounted, answered
// by the registry.
import type { SecondFactorHook } from '../accounts/second-factor'
import { invalidTicket } from './errors'
import type { Registry } from './registry'
import { loadTicket, redeemTicket } from './tickets'

export function secondFactorHook(mfa: Registry): SecondFactorHook {
  return {
    enabled: mfa.enabled,
    authenticatorTypes: mfa.authenticatorTypes,
    state: mfa.state,
    hasSms: async (userId) => (await mfa.phoneFactors(userId)).length > 0,
    challenge: mfa.loginChallenge,
    async verify(purpose, ticket, expected, method, code) {
      const row = await loadTicket(purpose, ticket)
      if (
        row.userId !== expected.userId ||
        Object.entries(expected.data).some(([key, value]) => row.data[key] !== value)
      )
        throw invalidTicket()
      await mfa.verify(row, method, code)
      return async () => {
        if (!(await redeemTicket(row))) throw invalidTicket()
      }
    },
    requireElevation: mfa.requireElevation,
    removeAll: mfa.removeAll,
  }
}
