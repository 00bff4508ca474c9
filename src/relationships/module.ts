// The relationships domain as the app mounts it (domain.ts): friends, blocks and friend requests, their READY field.
import type { DomainModule } from '../domain'
import { relationshipIdentify } from './gateway'
import { relationshipEndpoints } from './routes'

export const relationshipsModule = {
  name: 'relationships',
  endpoints: relationshipEndpoints,
  identify: relationshipIdentify,
} satisfies DomainModule
