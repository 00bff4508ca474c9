// The experiments domain as the app mounts it (domain.ts): GET /experiments and READY's assignments.
import type { DomainModule } from '../domain'
import { experimentsEndpoints } from './routes'
import { experimentsIdentify } from './service'

export const experimentsModule = {
  name: 'experiments',
  endpoints: experimentsEndpoints,
  identify: experimentsIdentify,
} satisfies DomainModule
