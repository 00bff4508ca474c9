// The lobbies domain as the app mounts it (domain.ts): its routes, the lobby topics of a new Gateway session, the
// guild port (guilds' channels, invites and messages, reached without guilds importing lobbies), the idle sweeper and
// the event webhooks' delivery worker; the lobby port of presence (lobby-mates see each other's presence).
import type { DomainModule } from '../domain'
import { guildsForLobbies } from '../guilds/public'
import { setLobbyPort } from '../relationships/lobby-port'
import { lobbiesWithMembers, lobbyIdentify, lobbySessionEnd, lobbySessionStart } from './gateway'
import { setGuildPort } from './guild-port'
import { startEventDeliveries, stopEventDeliveries } from './event-webhooks'
import { startLobbySweeper, stopLobbySweeper } from './idle'
import { lobbyEndpoints } from './routes'
import { deferIdleRestartsToBatchEnd } from './store'

export const lobbiesModule = {
  name: 'lobbies',
  endpoints: lobbyEndpoints,
  identify: lobbyIdentify,
  sessionStart: lobbySessionStart,
  sessionEnd: lobbySessionEnd,
  install: () => {
    setGuildPort(guildsForLobbies)
    setLobbyPort({ lobbiesOf: lobbiesWithMembers })
    deferIdleRestartsToBatchEnd()
  },
  start: async () => {
    await startLobbySweeper()
    startEventDeliveries()
  },
  stop: async () => {
    await stopEventDeliveries()
    stopLobbySweeper()
  },
} satisfies DomainModule
