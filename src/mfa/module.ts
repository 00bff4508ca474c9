// The mfa domain as the app mounts it (domain.ts): its endpoints and the second-factor hook the account flows call,
// both answered by the registry of factors (factors/index.ts), and the sweep of expired tickets.
import { installSecondFactor } from '../accounts/second-factor'
import type { DomainModule } from '../domain'
import { registry } from './factors'
import { mfaEndpoints } from './routes'
import { secondFactorHook } from './second-factor'
import { purgeExpiredTickets } from './tickets'

export const mfaModule = {
  name: 'mfa',
  endpoints: mfaEndpoints(registry),
  install: () => installSecondFactor(secondFactorHook(registry)),
  sweep: purgeExpiredTickets,
} satisfies DomainModule
