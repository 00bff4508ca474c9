// Start and stop the whole service: configuration, database, HTTP + Gateway listener.
import { buildApp, type App } from './app'
import { config, setConfig, type Config } from './config'
import { closeDatabase, openDatabase } from './db/client'
import { installTransports } from './delivery/transports'
import { attachGateway, closeAllGatewaySockets } from './gateway/server'
import { startHousekeeping, stopHousekeeping } from './housekeeping'
import { modules } from './modules'

export type Running = { app: App; port: number; url: string; stop: () => Promise<void> }

export async function startServer(overrides: Partial<Config> = {}): Promise<Running> {
  const cfg = setConfig({ ...config(), ...overrides })
  openDatabase(cfg.databasePath, { syncFull: cfg.databaseSyncFull })
  installTransports(cfg)
  const app = buildApp()
  app.listen({ port: cfg.port, hostname: cfg.host })
  const port = app.server!.port!
  attachGateway(app.server!)
  for (const m of modules) m.start?.()
  startHousekeeping()
  // BASE_URL derived from the real port when it was not given (port 0 in tests).
  if (!process.env.BASE_URL && !overrides.baseUrl) {
    const host = cfg.host === '0.0.0.0' || cfg.host === '::' ? 'localhost' : cfg.host
    setConfig({ ...cfg, baseUrl: `http://${host}:${port}`, webUrl: overrides.webUrl ?? process.env.WEB_URL ?? `http://${host}:${port}` })
  }
  // Printed at every level but silent: operators and scripts wait for this line.
  if (cfg.logLevel !== 'silent') console.log(`${new Date().toISOString()} INFO listening url=${config().baseUrl} database=${cfg.databasePath}`)
  let stopped = false
  return {
    app,
    port,
    url: `http://127.0.0.1:${port}`,
    async stop() {
      if (stopped) return
      stopped = true
      closeAllGatewaySockets()
      for (const m of [...modules].reverse()) await m.stop?.()
      stopHousekeeping()
      await app.stop(true)
      closeDatabase()
    },
  }
}

