// The provisional accounts domain as the app mounts it (domain.ts): the Social SDK's token endpoints.
import type { DomainModule } from '../domain'
import { provisionalEndpoints } from './routes'

export const provisionalModule = {
  name: 'provisional',
  endpoints: provisionalEndpoints,
} satisfies DomainModule
