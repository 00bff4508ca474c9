// The auth domain as the app mounts it (domain.ts): login, registration, verification, sessions, handoff, recovery
// and account changes.
import type { DomainModule } from '../domain'
import { accountChangeRoutes, recoveryPublicRoutes } from './recovery-routes'
import { authEndpoints, authPublicRoutes, authSessionRoutes } from './routes'

export const authModule = {
  name: 'auth',
  endpoints: authEndpoints,
  api: [authPublicRoutes, authSessionRoutes, recoveryPublicRoutes, accountChangeRoutes],
} satisfies DomainModule
