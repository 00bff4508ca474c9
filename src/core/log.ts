// One-line logs on stdout/stderr, filtered by the level the configuration sets (config.ts calls setLogLevel).
export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 }

let threshold: LogLevel = 'info'

/** The most detailed level written from now on. */
export function setLogLevel(level: LogLevel): void {
  threshold = level
}

function write(level: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>) {
  if (ORDER[threshold] < ORDER[level]) return
  const extra = fields ? ' ' + Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ') : ''
  const line = `${new Date().toISOString()} ${level.toUpperCase()} ${message}${extra}`
  if (level === 'error' || level === 'warn') console.error(line)
  else console.log(line)
}

export const log = {
  error: (m: string, f?: Record<string, unknown>) => write('error', m, f),
  warn: (m: string, f?: Record<string, unknown>) => write('warn', m, f),
  info: (m: string, f?: Record<string, unknown>) => write('info', m, f),
  debug: (m: string, f?: Record<string, unknown>) => write('debug', m, f),
}
