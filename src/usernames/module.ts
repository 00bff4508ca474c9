// The usernames domain as the app mounts it (domain.ts).
import type { DomainModule } from '../domain'
import { usernameRoutes } from './routes'

export const usernamesModule = { name: 'usernames', api: [usernameRoutes] } satisfies DomainModule
