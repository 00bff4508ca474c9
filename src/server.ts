// Start and stop the whole service: `createApp` builds its App (core/app.ts) — configuration, database (locked to
// this process) or PostgreSQL pool, the bus across nodes, transports, metrics, the HTTP app — and `startServer`
// listens (HTTP + Gateway, the optional metrics listener) and starts the modules. A start that cannot happen throws
// StartupError with one line for the operator.
import { lookup } from 'node:dns/promises'
import { mkdirSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname } from 'node:path'
import { websocket as elysiaSockets } from 'elysia/ws'
import { buildApp, type App as HttpApp } from './app'
import { type Config, config, loadConfig, publicUrlGiven, setConfig } from './config'
import { type App, rootApp } from './core/app'
import { log } from './core/log'
import { closeDatabase, DatabaseOpenError, openDatabase } from './db/client'
import { postgresSide } from './db/postgres-side'
import { DatabaseLockedError, lockDatabase, unlockDatabase } from './db/lock'
import { installTransports } from './delivery/transports'
import { attachGateway, closeAllGatewaySockets } from './gateway/server'
import { startHousekeeping, stopHousekeeping } from './housekeeping'
import { installMetrics, startMetricsListener } from './metrics'
import { modules } from './modules'
import { buildInfo } from './version'
import type { ClusterNode } from './cluster/node'

/** How long a stop waits for the requests under way. */
const STOP_GRACE_MS = 10_000

/** A service listening: its HTTP app (Elysia's), its App (core/app.ts), where it listens, and how to stop it. */
export type Running = { app: HttpApp; service: App; port: number; url: string; stop: () => Promise<void> }

/** A start-up failure the operator can act on; its message is the one line printed. */
export class StartupError extends Error {}

function firstLine(error: unknown): string {
  const e = error as { code?: string; message?: string }
  const message = String(e?.message ?? error).split('\n')[0]
  return e?.code && !message.includes(e.code) ? `${e.code}: ${message}` : message
}

/** Why `host:port` could not be listened on, in words. */
async function listenFailure(error: unknown, what: string, host: string, port: number): Promise<StartupError> {
  const code = (error as { code?: string })?.code
  if (isIP(host) === 0) {
    const resolves = await lookup(host).then(
      () => true,
      () => false,
    )
    if (!resolves)
      return new StartupError(
        `cannot listen on ${host}:${port}: ${what} "${host}" is neither an IP address nor a name that resolves`,
      )
  }
  if (code === 'EADDRINUSE')
    return new StartupError(`cannot listen on ${host}:${port}: the port is already in use (another server?)`)
  if (code === 'EACCES')
    return new StartupError(`cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`)
  if (code === 'EADDRNOTAVAIL')
    return new StartupError(`cannot listen on ${host}:${port}: ${host} is not an address of this machine`)
  return new StartupError(`cannot listen on ${host}:${port}: ${firstLine(error)}`)
}

async function openConfiguredDatabase(cfg: Config): Promise<void> {
  if (!cfg.databaseUrl) return openLockedDatabase(cfg)
  try {
    const { openPostgres } = await postgresSide()
    await openPostgres(cfg.databaseUrl)
  } catch (error) {
    throw error instanceof DatabaseOpenError ? new StartupError(error.message) : error
  }
}

function openLockedDatabase(cfg: Config): void {
  try {
    if (cfg.databasePath !== ':memory:') mkdirSync(dirname(cfg.databasePath), { recursive: true })
    lockDatabase(cfg.databasePath)
  } catch (error) {
    if (error instanceof DatabaseLockedError) throw new StartupError(error.message)
    throw new StartupError(`cannot open database ${cfg.databasePath}: ${firstLine(error)}`)
  }
  try {
    openDatabase(cfg.databasePath, { syncFull: cfg.databaseSyncFull })
  } catch (error) {
    unlockDatabase()
    throw error instanceof DatabaseOpenError ? new StartupError(error.message) : error
  }
}

/**
 * The cluster side (src/cluster/node.ts: ioredis, the Gateway's log), loaded only in cluster mode. As the PostgreSQL
 * side it needs, it is reached through import() only: a chunk of the binary evaluated the first time this runs.
 */
async function startClusterSide(redisUrl: string): Promise<ClusterNode> {
  let side: typeof import('./cluster/node')
  try {
    side = await import('./cluster/node')
  } catch (error) {
    throw new StartupError(`cannot use REDIS_URL: the cluster side failed to load: ${firstLine(error)}`)
  }
  try {
    return await side.startClusterNode(redisUrl)
  } catch (error) {
    throw new StartupError(`cannot reach Redis at ${redisHost(redisUrl)}: ${firstLine(error)}`)
  }
}

/** Where REDIS_URL points, without its password. */
const redisHost = (url: string) => url.replace(/\/\/[^@/]*@/, '//')

/**
 * Listen. The root service through Elysia's own listen; a service in an App of its own (core/app.ts) on a Bun server
 * whose every entry — Elysia's fetch, the routes Bun answers itself (lane, /gateway), each socket event — enters its
 * App first (Bun starts each with none). reusePort off (Elysia turns it on): a second server on the same port must
 * fail, not share it.
 */
function listenIn(context: App, app: HttpApp, at: { port: number; hostname: string }): void {
  if (context.root) return void app.listen({ ...at, reusePort: false })
  const enter =
    <A extends unknown[], R>(fn: (...args: A) => R) =>
    (...args: A): R => {
      context.enterHere()
      return fn(...args)
    }
  const { routes = {}, ...serve } = (app.config.serve ?? {}) as { routes?: Record<string, Record<string, unknown>> }
  const entered: Record<string, Record<string, unknown>> = {}
  for (const [path, methods] of Object.entries(routes))
    entered[path] = Object.fromEntries(
      Object.entries(methods).map(([method, h]) => [method, enter(h as (...args: unknown[]) => unknown)]),
    )
  const ws = { ...app.config.websocket, ...elysiaSockets } as Record<string, unknown>
  for (const event of ['open', 'message', 'close', 'drain'])
    if (typeof ws[event] === 'function') ws[event] = enter(ws[event] as (...args: unknown[]) => unknown)
  const fetch = app.fetch
  app.server = Bun.serve({
    ...serve,
    ...at,
    reusePort: false,
    routes: entered,
    websocket: ws,
    fetch: enter((request: Request) => fetch(request)),
  } as Parameters<typeof Bun.serve>[0])
}

/** A service built by createApp, not listening yet. */
export type Created = {
  service: App
  config: Config
  http: HttpApp
  cluster: ClusterNode | undefined
  /** Undo what was built (a start that failed after it): the bus, the database. */
  release(): Promise<void>
}

/**
 * Build a service in `service` (core/app.ts): the root App — the process's service — unless a second service in the
 * same process is given one of its own (`newApp`). Its configuration is the App's (the environment's, for a new one)
 * with `overrides`; then its database (SQLite, locked to this process, or its own PostgreSQL pool and listener), its
 * bus across nodes (cluster mode), its transports and metrics, and its HTTP app, all held by the App (AppState).
 */
export function createApp(overrides: Partial<Config> = {}, service = rootApp()): Promise<Created> {
  return service.enter(async () => {
    // Cluster mode (REDIS_URL) is for several nodes on one PostgreSQL database (config.ts refuses it with SQLite).
    const asked = { ...config(), ...overrides }
    if (asked.redisUrl && !asked.databaseUrl)
      throw new StartupError('REDIS_URL is for several nodes on PostgreSQL: set DATABASE_URL=postgres://… too')
    const cfg = setConfig(asked)
    await openConfiguredDatabase(cfg)
    let cluster: ClusterNode | undefined
    const release = async () => {
      await cluster?.stop()
      await closeDatabase()
      unlockDatabase()
    }
    try {
      if (cfg.redisUrl) cluster = await startClusterSide(cfg.redisUrl)
      installTransports(cfg)
      installMetrics()
      return { service, config: cfg, http: buildApp(), cluster, release }
    } catch (error) {
      await release()
      throw error
    }
  })
}

/**
 * Build the service (createApp) in `service` and listen: everything it holds lives there, and its requests, sockets
 * and timers run in it.
 */
export async function startServer(overrides: Partial<Config> = {}, service = rootApp()): Promise<Running> {
  const running = await service.enter(async () => start(overrides, await createApp(overrides, service)))
  return {
    ...running,
    stop: () =>
      service.enter(async () => {
        await running.stop()
        service.close()
      }),
  }
}

async function start(overrides: Partial<Config>, created: Created): Promise<Running> {
  const { service, config: cfg, http: app, cluster } = created
  let metricsServer: ReturnType<typeof startMetricsListener>
  try {
    try {
      listenIn(service, app, { port: cfg.port, hostname: cfg.host })
    } catch (error) {
      throw await listenFailure(error, 'HOST', cfg.host, cfg.port)
    }
    try {
      metricsServer = startMetricsListener()
    } catch (error) {
      await app.stop(true)
      throw await listenFailure(error, 'METRICS_HOST', cfg.metricsHost, cfg.metricsPort)
    }
  } catch (error) {
    await created.release()
    throw error
  }
  const port = app.server!.port!
  attachGateway(app.server!)
  for (const m of modules) await m.start?.()
  startHousekeeping()
  // The public address derived from the real port when it was not given (port 0 in tests).
  if (!publicUrlGiven() && !overrides.baseUrl) {
    const host = cfg.host === '0.0.0.0' || cfg.host === '::' ? 'localhost' : cfg.host
    setConfig({
      ...cfg,
      baseUrl: `http://${host}:${port}`,
      webUrl: overrides.webUrl ?? process.env.WEB_URL ?? `http://${host}:${port}`,
    })
  }
  const rpHost = config().webauthnRpId ?? new URL(config().webUrl).hostname
  if (isIP(rpHost.replace(/^\[|\]$/g, '')) !== 0)
    log.warn('passkeys and security keys will not work: browsers refuse an IP address as WebAuthn relying party', {
      host: rpHost,
      fix: 'set BASE_URL (or WEB_URL) to a domain name, or localhost for one machine',
    })
  // Operators and scripts wait for this line.
  log.notice('listening', {
    url: config().baseUrl,
    database: cfg.databaseUrl ? cfg.databaseUrl.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@') : cfg.databasePath,
    ...buildInfo(),
    pid: process.pid,
    ...(metricsServer ? { metrics: `http://${cfg.metricsHost}:${metricsServer.port}/metrics` } : {}),
  })
  let stopped = false
  return {
    app,
    service,
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (stopped) return
      stopped = true
      // No connection is accepted from here on (idle kept-alive ones are closed; requests under way and sockets go
      // on): a client told below to reconnect reaches another node, not this one again, where it would resume a
      // session that gets nothing more and ends with the node.
      const listener = app.server!
      void listener.stop(false)
      await closeAllGatewaySockets()
      for (const m of [...modules].reverse()) await m.stop?.()
      stopHousekeeping()
      // Requests under way are answered (up to 10 s), then what is left is cut: an upgrade gives no client an error.
      await Promise.race([app.stop(false), Bun.sleep(STOP_GRACE_MS)])
      await listener.stop(true)
      await metricsServer?.stop(true)
      await cluster?.stop()
      await closeDatabase()
      unlockDatabase()
    },
  }
}

export { loadConfig }
