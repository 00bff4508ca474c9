// The lobbies domain as the app mounts it (domain.ts): its routes, the lobby topics of a new Gateway session, the
// guild port (guilds' channels, invites and messages, reached without guilds importing lobbies) and the idle sweeper.
import type { DomainModule } from '../domain'
import { guildsForLobbies } from '../guilds/public'
import { lobbyIdentify, lobbySessionEnd, lobbySessionStart } from './gateway'
import { setGuildPort } from './guild-port'
import { startLobbySweeper, stopLobbySweeper } from './idle'
import { lobbiesRoutes, lobbyGet, lobbyMessagePost, lobbyMessagesGet } from './routes'

export const lobbiesModule = {
  name: 'lobbies',
  api: [lobbiesRoutes],
  lane: [lobbyGet, lobbyMessagesGet, lobbyMessagePost],
  identify: lobbyIdentify,
  sessionStart: lobbySessionStart,
  sessionEnd: lobbySessionEnd,
  install: () => setGuildPort(guildsForLobbies),
  start: startLobbySweeper,
  stop: stopLobbySweeper,
} satisfies DomainModule
