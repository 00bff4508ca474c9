// The mfa domain as the app mounts it (domain.ts): its routes, the second-factor hook the account flows call, and
// the sweep of expired tickets.
import { installSecondFactor } from '../accounts/second-factor'
import type { DomainModule } from '../domain'
import { mfaPublicRoutes, mfaSessionRoutes } from './routes'
import { secondFactorForAccounts } from './second-factor'
import { purgeExpiredTickets } from './tickets'

export const mfaModule = {
  name: 'mfa',
  api: [mfaPublicRoutes, mfaSessionRoutes],
  install: () => installSecondFactor(secondFactorForAccounts),
  sweep: purgeExpiredTickets,
} satisfies DomainModule
