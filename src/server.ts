// Start and stop the whole service: configuration, database (locked to this process), HTTP + Gateway listener,
// the optional metrics listener. A start that cannot happen throws StartupError with one line for the operator.
import { lookup } from 'node:dns/promises'
import { mkdirSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname } from 'node:path'
import { websocket as elysiaSockets } from 'elysia/ws'
import { buildApp, type App } from './app'
import { type Config, config, loadConfig, publicUrlGiven, setConfig } from './config'
import { type AppContext, currentApp, rootApp } from './core/app-context'
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

export type Running = { app: App; port: number; url: string; stop: () => Promise<void> }

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
 * Start the service in `context` (core/app-context.ts): the root one — the process's service — unless a second service
 * in the same process is given one of its own (`newAppContext`); everything it holds lives there, and its requests,
 * sockets and timers run in it. Its configuration is the context's (the environment's, for a new one) with `overrides`.
 */
/**
 * Listen. The root service through Elysia's own listen; a service in a context of its own (core/app-context.ts) on a
 * Bun server whose every entry — Elysia's fetch, the routes Bun answers itself (lane, /gateway), each socket event —
 * enters its context first (Bun starts each with none). reusePort off (Elysia turns it on): a second server on the
 * same port must fail, not share it.
 */
function listenIn(context: AppContext, app: App, at: { port: number; hostname: string }): void {
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

export async function startServer(overrides: Partial<Config> = {}, context = rootApp()): Promise<Running> {
  const running = await context.enter(() => start(overrides))
  return {
    ...running,
    stop: () =>
      context.enter(async () => {
        await running.stop()
        context.close()
      }),
  }
}

async function start(overrides: Partial<Config>): Promise<Running> {
  // Cluster mode (REDIS_URL) is for several nodes on one PostgreSQL database (config.ts refuses it with SQLite).
  const asked = { ...config(), ...overrides }
  if (asked.redisUrl && !asked.databaseUrl)
    throw new StartupError('REDIS_URL is for several nodes on PostgreSQL: set DATABASE_URL=postgres://… too')
  const cfg = setConfig(asked)
  await openConfiguredDatabase(cfg)
  let cluster: ClusterNode | undefined
  if (cfg.redisUrl) {
    try {
      cluster = await startClusterSide(cfg.redisUrl)
    } catch (error) {
      await closeDatabase()
      throw error
    }
  }
  let app: App
  let metricsServer: ReturnType<typeof startMetricsListener>
  try {
    installTransports(cfg)
    installMetrics()
    app = buildApp()
    try {
      listenIn(currentApp(), app, { port: cfg.port, hostname: cfg.host })
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
    await cluster?.stop()
    await closeDatabase()
    unlockDatabase()
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
