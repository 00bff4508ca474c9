// The auth domain as the app mounts it (domain.ts): login, registration, verification, sessions, handoff, recovery
// and account changes.
import type { DomainModule } from '../domain'
import { accountChangeRoutes, recoveryPublicRoutes } from './recovery-routes'
import { authPublicRoutes, authSessionRoutes, authSessionsGet } from './routes'

export const authModule = {
  name: 'auth',
  api: [authPublicRoutes, authSessionRoutes, recoveryPublicRoutes, accountChangeRoutes],
  lane: [authSessionsGet],
} satisfies DomainModule
