// Builds the Elysia app from the domain modules. Tests import this; main.ts listens.
import { Elysia } from 'elysia'
import { config } from './config'
import { setTokenResolvers } from './core/caller'
import { liveSessionIds, resolveUserToken } from './auth/sessions'
import { httpBasics } from './http/basics'
import { docs } from './http/docs'
import { resolveBearerToken, resolveBotToken } from './oauth2/applications'
import { registerLobbyGateway } from './lobbies/gateway'
import { registerVoiceGateway } from './voice/gateway'
import { lobbiesRoutes } from './lobbies/routes'
import { oauth2Routes } from './oauth2/routes'
import { usersRoutes } from './users/routes'
import { authPublicRoutes, authSessionRoutes } from './auth/routes'
import { usernameRoutes } from './usernames/routes'
import { accountRoutes, recoveryPublicRoutes } from './auth/recovery-routes'
import { mfaPublicRoutes, mfaSessionRoutes } from './mfa/routes'
import { channelRoutes, guildRoutes, inviteRoutes } from './guilds/routes'
import { guildIdentify } from './guilds/gateway'
import { guildsForLobbies } from './guilds/public'
import { setGuildPort } from './lobbies/guild-port'
import { userReady } from './users/ready'
import { onIdentify, setAuthSessionCheck } from './gateway/bus'
import { gatewayRoutes } from './gateway/routes'
import { gatewaySocket } from './gateway/server'

/** Every REST route of the service, without prefix. */
function api() {
  return new Elysia().use(usersRoutes).use(authPublicRoutes).use(authSessionRoutes).use(recoveryPublicRoutes).use(accountRoutes).use(mfaPublicRoutes).use(mfaSessionRoutes).use(usernameRoutes).use(gatewayRoutes).use(guildRoutes).use(channelRoutes).use(inviteRoutes).use(oauth2Routes).use(lobbiesRoutes)
}

export function buildApp() {
  setTokenResolvers({ user: resolveUserToken, bot: resolveBotToken, bearer: resolveBearerToken })
  onIdentify(userReady)
  setAuthSessionCheck(liveSessionIds)
  onIdentify(guildIdentify)
  setGuildPort(guildsForLobbies)
  registerLobbyGateway()
  registerVoiceGateway()
  return (
    // Bun's own limit answers a bare 413; ours (http/basics.ts) answers with an error body, so Bun's sits above it.
    new Elysia({ serve: { maxRequestBodySize: config().maxBodyBytes * 4 } })
      .use(httpBasics)
      .use(docs)
      .use(gatewaySocket)
      .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
      // Discord serves the same API under /api/v9, /api/v10 and unversioned /api.
      .group('/api/v9', (app) => app.use(api()))
      .group('/api/v10', (app) => app.use(api()))
      .group('/api', (app) => app.use(api()))
  )
}

export type App = ReturnType<typeof buildApp>
