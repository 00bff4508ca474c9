// The remote-auth domain as the app mounts it (domain.ts): the mobile REST routes, the desktop socket and its
// sweeper, and (several nodes) the frames other nodes send to the desktops whose socket is here.
import type { DomainModule } from '../domain'
import { onNodeMessage, onOrphanedPlace } from '../gateway/nodes'
import { desktopNodeMessage, desktopOrphaned, startRemoteAuthGateway, stopRemoteAuthGateway } from './desktop'
import { remoteAuthEndpoints } from './routes'
import { remoteAuthSocket } from './socket'

export const remoteAuthModule = {
  name: 'remote-auth',
  endpoints: remoteAuthEndpoints,
  root: [remoteAuthSocket],
  install: () => {
    onNodeMessage('remote-auth', desktopNodeMessage)
    onOrphanedPlace('remote-auth:', desktopOrphaned)
  },
  start: startRemoteAuthGateway,
  stop: stopRemoteAuthGateway,
} satisfies DomainModule
