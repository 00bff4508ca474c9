// Builds the Elysia app from the domain modules. Tests import this; main.ts listens.
import { Elysia } from 'elysia'
import { config } from './config'
import { setTokenResolvers } from './core/caller'
import { liveSessionIds, resolveUserToken } from './auth/sessions'
import { httpBasics } from './http/basics'
import { cors } from './http/cors'
import { metricsRoute } from './metrics'
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
import { gatewayDocsPage } from './gateway/docs'
import { gatewayRoutes } from './gateway/routes'
import { gatewaySocket } from './gateway/server'
import { WS_MAX_FRAME_BYTES } from './gateway/protocol'
import { remoteAuthRoutes } from './remote-auth/routes'
import { remoteAuthSocket } from './remote-auth/socket'
import { experimentsRoutes } from './experiments/routes'
import { experimentsIdentify } from './experiments/service'
import { webRoutes } from './web/routes'

/** Every REST route of the service, without prefix. */
function api() {
  return new Elysia().use(usersRoutes).use(authPublicRoutes).use(authSessionRoutes).use(recoveryPublicRoutes).use(accountRoutes).use(mfaPublicRoutes).use(mfaSessionRoutes).use(usernameRoutes).use(gatewayRoutes).use(guildRoutes).use(channelRoutes).use(inviteRoutes).use(oauth2Routes).use(lobbiesRoutes).use(remoteAuthRoutes).use(experimentsRoutes)
}

export function buildApp() {
  setTokenResolvers({ user: resolveUserToken, bot: resolveBotToken, bearer: resolveBearerToken })
  onIdentify(userReady)
  setAuthSessionCheck(liveSessionIds)
  onIdentify(guildIdentify)
  onIdentify(experimentsIdentify)
  setGuildPort(guildsForLobbies)
  registerLobbyGateway()
  registerVoiceGateway()
  // Bun's own limit answers a bare 413; ours (http/basics.ts) answers with an error body, so Bun's sits above it.
  // WebSocket options are app-wide in Elysia (per-route ones are ignored): Bun refuses a larger frame before it is
  // parsed (close 1009); the Gateway answers 4002 for frames between its own 15 KiB limit and this.
  const root = new Elysia({ serve: { maxRequestBodySize: config().maxBodyBytes * 4 }, websocket: { maxPayloadLength: WS_MAX_FRAME_BYTES } })
  return (
    // The API docs read the finished app's routes when first asked for.
    root
      .use(httpBasics)
      .use(cors)
      .use(docs(() => root))
      .get('/api/docs/gateway', gatewayDocsPage, { detail: { hide: true } })
      .use(gatewaySocket)
      .use(remoteAuthSocket)
      .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
      // Prometheus text when METRICS=true (src/metrics.ts); a 404 otherwise.
      .get('/metrics', metricsRoute, { detail: { hide: true } })
      // Discord serves the same API under /api/v9, /api/v10 and unversioned /api.
      .group('/api/v9', (app) => app.use(api()))
      .group('/api/v10', (app) => app.use(api()))
      .group('/api', (app) => app.use(api()))
      // The web client's pages at the root (/login, /reset, /oauth2/authorize, ...); unknown paths keep the JSON 404.
      .use(webRoutes)
  )
}

export type App = ReturnType<typeof buildApp>
