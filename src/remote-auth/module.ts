// The remote-auth domain as the app mounts it (domain.ts): the mobile REST routes, the desktop socket and its
// sweeper.
import type { DomainModule } from '../domain'
import { startRemoteAuthGateway, stopRemoteAuthGateway } from './desktop'
import { remoteAuthRoutes } from './routes'
import { remoteAuthSocket } from './socket'

export const remoteAuthModule = {
  name: 'remote-auth',
  api: [remoteAuthRoutes],
  root: [remoteAuthSocket],
  start: startRemoteAuthGateway,
  stop: stopRemoteAuthGateway,
} satisfies DomainModule
