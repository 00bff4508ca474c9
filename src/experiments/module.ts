// The experiments domain as the app mounts it (domain.ts): GET /experiments and READY's assignments.
import type { DomainModule } from '../domain'
import { experimentsRoutes } from './routes'
import { experimentsIdentify } from './service'

export const experimentsModule = {
  name: 'experiments',
  api: [experimentsRoutes],
  identify: experimentsIdentify,
} satisfies DomainModule
