// The web client as the app mounts it (domain.ts): its pages and assets at the root, after the API.
import type { DomainModule } from '../domain'
import { webRoutes } from './routes'

export const webModule = { name: 'web', root: [webRoutes] } satisfies DomainModule
