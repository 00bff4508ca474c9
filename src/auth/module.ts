// The auth domain as the app mounts it (domain.ts): login, registration, verification, sessions, handoff, recovery
// and account changes.
import type { DomainModule } from '../domain'
import { recoveryEndpoints } from './recovery-routes'
import { authEndpoints } from './routes'

export const authModule = {
  name: 'auth',
  endpoints: [...authEndpoints, ...recoveryEndpoints],
} satisfies DomainModule
