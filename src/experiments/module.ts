// The experiments domain as the app mounts it (domain.ts): GET /experiments and READY's assignments.
import type { DomainModule } from '../domain'
import { experimentsGet, experimentsRoutes } from './routes'
import { experimentsIdentify } from './service'

export const experimentsModule = {
  name: 'experiments',
  api: [experimentsRoutes],
  lane: [experimentsGet],
  identify: experimentsIdentify,
} satisfies DomainModule
