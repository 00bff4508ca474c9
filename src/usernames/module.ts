// The usernames domain as the app mounts it (domain.ts).
import type { DomainModule } from '../domain'
import { usernameEndpoints } from './routes'

export const usernamesModule = { name: 'usernames', endpoints: usernameEndpoints } satisfies DomainModule
