// The lobbies domain as the app mounts it (domain.ts): its routes, the lobby topics of a new Gateway session, the
// guild port (guilds' channels, invites and messages, reached without guilds importing lobbies), the idle sweeper and
// the event webhooks' delivery worker; relationships' game port (lobby-mates see each other's presence; a game's
// social layer asks about applications); a member's new display name told to its lobby-mates.
import { onProfileChange } from '../accounts/profile-hooks'
import type { DomainModule } from '../domain'
import { guildsForLobbies } from '../guilds/public'
import { findApplication, hasGrant } from '../oauth2/store'
import { setGamePort } from '../relationships/game-port'
import { lobbiesWithMembers, lobbyIdentify, lobbySessionEnd, lobbySessionStart, tellLobbyMatesProfile } from './gateway'
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
    setGamePort({
      lobbiesOf: lobbiesWithMembers,
      authorized: hasGrant,
      applicationName: async (id) => (await findApplication(id))?.name,
    })
    deferIdleRestartsToBatchEnd()
    onProfileChange(tellLobbyMatesProfile)
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
