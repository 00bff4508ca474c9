// Entry point of `bun run start`, `bun run cli ...` and the compiled binary.
// No arguments (or `serve`): run the server. `--help`, `--version`, or a CLI command otherwise.
// Every start-up failure is one line on stderr and a non-zero exit, never a stack trace.
import { ConfigError, loadConfig, setConfig } from './config'
import { parseInvocation, runCli } from './cli'
import { flushLogs, log } from './core/log'

function fail(message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(1)
}

async function main() {
  const invocation = parseInvocation(process.argv.slice(2))
  if (invocation.kind === 'exit') process.exit(invocation.code)
  try {
    const overrides: Record<string, string> = {}
    if (invocation.kind === 'serve' && invocation.port !== undefined) overrides.PORT = String(invocation.port)
    if (invocation.kind === 'serve' && invocation.host !== undefined) overrides.HOST = invocation.host
    setConfig(loadConfig({ ...process.env, ...overrides }))
  } catch (error) {
    if (error instanceof ConfigError) fail(`configuration error: ${error.message}`)
    throw error
  }
  if (invocation.kind === 'command') process.exit(await runCli(invocation.args))

  const { startServer, StartupError } = await import('./server')
  let running: Awaited<ReturnType<typeof startServer>>
  try {
    running = await startServer()
  } catch (error) {
    if (error instanceof StartupError) fail(`error: ${error.message}`)
    const message = String((error as Error)?.message ?? error).split('\n')[0]
    if (process.env.LOG_LEVEL === 'debug') process.stderr.write(`${(error as Error)?.stack ?? error}\n`)
    fail(`error: start-up failed: ${message}`)
  }
  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) return
    stopping = true
    log.notice('shutting down', { signal })
    await running.stop()
    log.notice('stopped')
    await flushLogs()
    process.exit(0)
  }
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
  process.on('SIGINT', () => void shutdown('SIGINT'))
}

await main()
