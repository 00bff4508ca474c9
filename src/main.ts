// @simplewebauthn/server loads @peculiar/x509, whose tsyringe needs Reflect metadata before it loads; in the compiled
// binary the bundle order can put it first, so the polyfill is the first thing the entry point loads.
import 'reflect-metadata'
// Entry point of `bun run start`, `bun run cli ...` and the compiled binary.
// No arguments (or `serve`): run the server. Anything else: a CLI command.
import { ConfigError, loadConfig, setConfig } from './config'

async function main() {
  try {
    setConfig(loadConfig())
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`configuration error: ${error.message}`)
      process.exit(1)
    }
    throw error
  }
  const args = process.argv.slice(2)
  if (args.length > 0 && args[0] !== 'serve') {
    const { runCli } = await import('./cli')
    process.exit(await runCli(args))
  }
  const { startServer } = await import('./server')
  const running = await startServer()
  const shutdown = async (signal: string) => {
    console.log(`${signal} received, shutting down`)
    await running.stop()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
