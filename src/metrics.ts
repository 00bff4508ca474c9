// GET /metrics (Prometheus text). Off unless METRICS=true (on the main port) or METRICS_PORT (a listener of its own
// on METRICS_HOST, 127.0.0.1 by default, serving nothing else). METRICS_TOKEN, when set, is required as
// `Authorization: Bearer <token>` on both. The counters live in core/metrics.ts; the values read at scrape time
// (sockets, database size, rows) are registered here, where every domain may be imported.
import type { Server } from 'bun'
import { config } from './config'
import { safeEqual } from './core/crypto'
import { Errors } from './core/errors'
import { collect, enableMetrics, renderMetrics } from './core/metrics'
import { databaseSize } from './db/client'
import { gatewayStats } from './gateway/server'
import { countLobbies } from './lobbies/store'
import { countUsers } from './accounts/store'
import { buildInfo } from './version'

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
const startedAt = Date.now() / 1000

/** Turn recording on when metrics are served, and register what is read at scrape time. */
export function installMetrics(): void {
  const cfg = config()
  enableMetrics(cfg.metrics || cfg.metricsPort > 0)
  collect('lobby_gateway_connections', 'Open Gateway WebSocket connections.', 'gauge', () => gatewayStats().connections)
  collect(
    'lobby_gateway_sessions',
    'Gateway sessions (identified, including those waiting to be resumed).',
    'gauge',
    () => gatewayStats().sessions,
  )
  collect(
    'lobby_gateway_replay_bytes',
    'Bytes held by the Gateway resume buffer (bounded by GATEWAY_REPLAY_BYTES).',
    'gauge',
    () => gatewayStats().replayBytes,
  )
  collect(
    'lobby_gateway_replay_entries',
    'Dispatches held by the Gateway resume buffer.',
    'gauge',
    () => gatewayStats().replayEntries,
  )
  // On PostgreSQL 0 (the operator asks PostgreSQL), not the size of whatever file DATABASE_PATH names.
  collect('lobby_database_size_bytes', 'Size of the SQLite database file and its write-ahead log.', 'gauge', () =>
    config().databaseUrl ? 0 : databaseSize(config().databasePath),
  )
  collect('lobby_lobbies', 'Lobbies.', 'gauge', countLobbies)
  collect('lobby_users', 'User accounts (bots not counted).', 'gauge', countUsers)
  collect('lobby_build_info', 'The running version: its commit, build date and target.', 'gauge', () => [
    [buildInfo(), 1],
  ])
  collect(
    'process_start_time_seconds',
    'Start time of the process since the Unix epoch, in seconds.',
    'gauge',
    () => startedAt,
  )
  collect('process_resident_memory_bytes', 'Resident memory size, in bytes.', 'gauge', () => process.memoryUsage.rss())
}

/** The /metrics answer: the text, 401 without the token when one is set. */
export async function metricsResponse(request: Request): Promise<Response> {
  const token = config().metricsToken
  if (token) {
    const given = request.headers.get('authorization') ?? ''
    if (!safeEqual(given, `Bearer ${token}`)) {
      return new Response(JSON.stringify(Errors.unauthorized().body()), {
        status: 401,
        headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer' },
      })
    }
  }
  return new Response(await renderMetrics(), { headers: { 'content-type': CONTENT_TYPE, 'cache-control': 'no-store' } })
}

/** The main port's route: a 404 like any unknown path unless METRICS=true. */
export async function metricsRoute({ request }: { request: Request }): Promise<Response> {
  if (!config().metrics) throw Errors.notFound()
  return metricsResponse(request)
}

/** METRICS_PORT's own listener. */
export function startMetricsListener(): Server<undefined> | undefined {
  const { metricsPort, metricsHost } = config()
  if (!metricsPort) return undefined
  return Bun.serve({
    port: metricsPort,
    hostname: metricsHost,
    reusePort: false,
    fetch(request) {
      const path = request.url.slice(request.url.indexOf('/', 8)).split('?')[0]
      if (path === '/metrics' && (request.method === 'GET' || request.method === 'HEAD'))
        return metricsResponse(request)
      return new Response(JSON.stringify(Errors.notFound().body()), {
        status: 404,
        headers: { 'content-type': 'application/json' },
      })
    },
  })
}
