// The remote-auth domain as the app mounts it (domain.ts): the mobile REST routes, the desktop socket and its
// sweeper.
import type { DomainModule } from '../domain'
import { startRemoteAuthGateway, stopRemoteAuthGateway } from './desktop'
import { remoteAuthEndpoints } from './routes'
import { remoteAuthSocket } from './socket'

export const remoteAuthModule = {
  name: 'remote-auth',
  endpoints: remoteAuthEndpoints,
  root: [remoteAuthSocket],
  start: startRemoteAuthGateway,
  stop: stopRemoteAuthGateway,
} satisfies DomainModule
