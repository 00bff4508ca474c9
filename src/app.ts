// Builds the Elysia app from the domain modules (modules.ts). Tests import this; main.ts listens.
import { Elysia } from 'elysia'
import { config } from './config'
import { forgetCallers, setCallerCacheGuard, setTokenResolvers } from './core/caller'
import { alsoForgetOnForeignCommit, checkForeignCommits } from './db/cache'
import { onIdentify, onOpcode, onSessionEnd, onSessionStart, setCredentialCheck } from './gateway/bus'
import { gatewayDocsPage } from './gateway/docs'
import { WS_MAX_FRAME_BYTES } from './gateway/protocol'
import { gatewayRoutes } from './gateway/routes'
import { gatewaySlashUpgrade, gatewayUpgrade } from './gateway/server'
import { installGateway } from './gateway/dispatch'
import { httpBasics } from './http/basics'
import { cors } from './http/cors'
import { docs } from './http/docs'
import { endpointRoutes, hotRoutes, routeLimits } from './http/endpoint'
import { laneRoutes } from './http/lane'
import { setRouteLimits } from './http/rate-limits'
import { metricsRoute } from './metrics'
import { modules } from './modules'

/** Hand each domain's tokens and Gateway hooks to the layers below, and let it plug into the domains below it. */
function mount(): void {
  // The Gateway as this service's event bus: every domain's publish reaches its sockets.
  installGateway()
  // A token whose session or account another process ended (the CLI) must fail on the next request.
  setCallerCacheGuard(checkForeignCommits)
  alsoForgetOnForeignCommit(forgetCallers)
  // The routes with a limit of their own, as their endpoints declare it.
  setRouteLimits(routeLimits(modules.flatMap((m) => m.endpoints ?? [])))
  for (const m of modules) {
    if (m.tokens) setTokenResolvers(m.tokens)
    if (m.liveSessions) setCredentialCheck('user', m.liveSessions)
    if (m.liveGrants) setCredentialCheck('bearer', m.liveGrants)
    if (m.liveBots) setCredentialCheck('bot', m.liveBots)
    if (m.identify) onIdentify(m.identify)
    for (const [op, handler] of Object.entries(m.opcodes ?? {})) onOpcode(Number(op), handler)
    if (m.sessionStart) onSessionStart(m.sessionStart)
    if (m.sessionEnd) onSessionEnd(m.sessionEnd)
    m.install?.()
  }
}

/** Every REST route of the service, without prefix. */
function api() {
  const app = new Elysia().use(gatewayRoutes)
  for (const m of modules) {
    if (m.endpoints) app.use(endpointRoutes(m.endpoints))
  }
  return app
}

/**
 * The HTTP app of the current App (core/app.ts): server.ts createApp builds it inside the App it runs in, and
 * startServer listens so that each request and socket event enters it (server.ts listenIn).
 */
export function buildApp() {
  mount()
  // Bun's own limit answers a bare 413; ours (http/basics.ts) answers with an error body, so Bun's sits above it.
  // WebSocket options are app-wide in Elysia (per-route ones are ignored): Bun refuses a larger frame before it is
  // parsed (close 1009); the Gateway answers 4002 for frames between its own 15 KiB limit and this.
  // The REST routes are built once and mounted under the three prefixes (one build per prefix cost ~5 ms of start).
  const rest = api()
  const root = new Elysia({
    // The hottest routes go from Bun's router straight to their handlers (http/lane.ts); Elysia keeps them documented.
    serve: {
      maxRequestBodySize: config().maxBodyBytes * 4,
      // The Gateway's upgrade too: a socket then keeps only what it needs (gateway/server.ts gatewayUpgrade).
      routes: {
        ...laneRoutes(modules.flatMap((m) => hotRoutes(m.endpoints ?? []))),
        '/gateway': { GET: gatewayUpgrade },
        // `/gateway/` too (gateway/server.ts gatewaySlashUpgrade); any longer path goes on to the app (its 404).
        '/gateway/*': { GET: gatewaySlashUpgrade((request): Response | Promise<Response> => root.fetch(request)) },
      },
    },
    websocket: { maxPayloadLength: WS_MAX_FRAME_BYTES },
  })
  const app = root
    .use(httpBasics)
    .use(cors)
    // The API docs read the finished app's routes when first asked for.
    .use(docs(() => root))
    .get('/api/docs/gateway', gatewayDocsPage, { detail: { hide: true } })
    .get('/healthz', () => ({ status: 'ok' }), { detail: { hide: true } })
    // Prometheus text when METRICS=true (src/metrics.ts); a 404 otherwise.
    .get('/metrics', metricsRoute, { detail: { hide: true } })
    // Discord serves the same API under /api/v9, /api/v10 and unversioned /api.
    .group('/api/v9', (app) => app.use(rest))
    .group('/api/v10', (app) => app.use(rest))
    .group('/api', (app) => app.use(rest))
  // Sockets and the web client's pages at the root (/remote-auth, /login, /reset, ...); unknown paths keep the JSON 404.
  for (const m of modules) for (const routes of m.root ?? []) app.use(routes)
  return app
}

export type App = ReturnType<typeof buildApp>
