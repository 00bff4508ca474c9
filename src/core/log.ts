// Logs, filtered by LOG_LEVEL, as text (`<time> <LEVEL> <message> key=value ...`) or, with LOG_FORMAT=json, one JSON
// object per line ({"time","level","msg",...}). Every line has a timestamp and a level and is one line: values with
// spaces, quotes or line breaks are JSON-quoted.
//
// Info and debug lines go to stdout through a buffer: a request appends one string, and the buffer is handed to a
// non-blocking writer every few milliseconds (a write per event-loop turn cost ~7 % of a cached request), so a slow
// reader of stdout never stalls a request. Errors and
// warnings are written to stderr at once (they are rare and must survive a crash). The CLI sends everything to stderr,
// keeping stdout for its JSON.
import type { FileSink } from 'bun'
import { writeSync } from 'node:fs'

export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

// Set by config.ts (setLogOptions) whenever the configuration changes: core reads nothing above it.
// Until then (a line written before anything read the configuration) the environment's values, unchecked, apply.
let threshold: LogLevel = (LOG_LEVELS as readonly string[]).includes(process.env.LOG_LEVEL ?? '')
  ? (process.env.LOG_LEVEL as LogLevel)
  : 'info'
let logFormat: LogFormat = process.env.LOG_FORMAT === 'json' ? 'json' : 'text'

/** The most detailed level written, and the line format, from now on. */
export function setLogOptions(level: LogLevel, format: LogFormat): void {
  threshold = level
  logFormat = format
}

type Level = Exclude<LogLevel, 'silent'>
const ORDER: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 }
const UPPER: Record<Level, string> = { error: 'ERROR', warn: 'WARN', info: 'INFO', debug: 'DEBUG' }

let lastMs = 0
let lastIso = ''
/** toISOString costs about a microsecond; one per millisecond is enough. */
function timestamp(): string {
  const now = Date.now()
  if (now !== lastMs) {
    lastMs = now
    lastIso = new Date(now).toISOString()
  }
  return lastIso
}

let capture: ((line: string) => void) | undefined
let toStderr = false
let pending = ''
let scheduled = false
let sink: FileSink | undefined
/** A flush the pipe has not taken yet: nothing more is handed to the writer until it has. */
let inFlight: Promise<unknown> | undefined
let dropped = 0
/** stdout is gone (its reader closed it): info lines are dropped from then on; the server carries on. */
let broken = false
/** What waits while stdout does not keep up; past it, lines are counted and dropped rather than held. */
const MAX_PENDING_CHARS = 4 * 1024 * 1024
/** How long a line may wait in the buffer, and how much may wait before it is handed over at once. */
const FLUSH_EVERY_MS = 5
const FLUSH_AT_CHARS = 64 * 1024

function flushSoon(): void {
  if (pending.length >= FLUSH_AT_CHARS && !inFlight) {
    void flushPending()
    return
  }
  if (scheduled) return
  scheduled = true
  setTimeout(flushPending, FLUSH_EVERY_MS)
}

function stdoutFailed(error: unknown): void {
  if (broken) return
  broken = true
  pending = ''
  inFlight = undefined
  try {
    writeSync(
      2,
      `${timestamp()} ERROR stdout failed (${(error as { code?: string })?.code ?? String(error)}): info and debug lines are no longer written\n`,
    )
  } catch {}
}

function flushPending(): Promise<unknown> | undefined {
  scheduled = false
  if (inFlight !== undefined) return inFlight
  if (!pending || broken) return undefined
  let chunk = pending
  pending = ''
  if (dropped) {
    chunk = `${timestamp()} WARN log lines dropped count=${dropped} reason=stdout-too-slow\n${chunk}`
    dropped = 0
  }
  try {
    if (!sink) {
      sink = Bun.stdout.writer()
      sink.unref?.()
    }
    // A pipe that takes only part of the chunk makes write() (not just flush()) return a promise, and that promise
    // rejects with EPIPE when the reader has gone: both are awaited here, so no rejection is left unhandled.
    const wrote = sink.write(chunk) as unknown
    const flushed = sink.flush() as unknown
    if (wrote instanceof Promise || flushed instanceof Promise) {
      inFlight = Promise.all([wrote, flushed]).then(() => {
        inFlight = undefined
        if (pending) flushSoon()
      }, stdoutFailed)
      return inFlight
    }
  } catch (error) {
    stdoutFailed(error)
  }
  return undefined
}

function emit(level: Level, line: string): void {
  if (capture) return capture(line)
  if (toStderr || level === 'error' || level === 'warn') {
    try {
      writeSync(2, line)
    } catch {}
    return
  }
  if (broken) return
  if (pending.length > MAX_PENDING_CHARS) {
    dropped++
    return
  }
  pending += line
  flushSoon()
}

/** Write what is buffered now (shutdown, tests). */
export async function flushLogs(): Promise<void> {
  await flushPending()
  if (pending) await flushPending()
}

/** Anything still buffered at exit is written synchronously. */
process.on('exit', () => {
  if (!pending || capture || broken) return
  try {
    writeSync(1, pending)
  } catch {}
  pending = ''
})

/** The CLI: every log line to stderr (stdout carries the command's output). */
export function logToStderr(): void {
  toStderr = true
}

/** Tests: receive every line (with its trailing newline) instead of stdout/stderr; undefined restores. */
export function captureLog(fn: ((line: string) => void) | undefined): void {
  capture = fn
}

const BARE = /^[^\s"=\\\x00-\x1f\x7f]+$/

function textValue(value: unknown): string {
  if (typeof value === 'string') return BARE.test(value) ? value : JSON.stringify(value)
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (value === null || value === undefined) return '-'
  return JSON.stringify(value) ?? '-'
}

function format(level: Level, message: string, fields?: Record<string, unknown>): string {
  const time = timestamp()
  if (logFormat === 'json') {
    const entry: Record<string, unknown> = { time, level, msg: message }
    if (fields) for (const key in fields) if (!(key in entry)) entry[key] = fields[key]
    return JSON.stringify(entry) + '\n'
  }
  let line = `${time} ${UPPER[level]} ${BARE.test(message) || /^[\w .:/-]+$/.test(message) ? message : JSON.stringify(message)}`
  if (fields) for (const key in fields) line += ` ${key}=${textValue(fields[key])}`
  return line + '\n'
}

/** Drizzle's error text ends with the failed query's parameters (password hashes, token hashes, addresses). */
const QUERY_PARAMS = /\nparams: [^\n]*/g

/** A field as it may be logged: an error's text without the parameters of the query that failed. */
function withoutParams(fields: Record<string, unknown>): Record<string, unknown> {
  let safe: Record<string, unknown> | undefined
  for (const key in fields) {
    const value = fields[key]
    if (typeof value === 'string' && value.includes('Failed query: ')) {
      safe ??= { ...fields }
      safe[key] = value.replace(QUERY_PARAMS, '\nparams: (not logged)')
    }
  }
  return safe ?? fields
}

function write(level: Level, message: string, fields?: Record<string, unknown>): void {
  if (ORDER[threshold] < ORDER[level]) return
  emit(level, format(level, message, fields && withoutParams(fields)))
}

export const log = {
  error: (m: string, f?: Record<string, unknown>) => write('error', m, f),
  warn: (m: string, f?: Record<string, unknown>) => write('warn', m, f),
  info: (m: string, f?: Record<string, unknown>) => write('info', m, f),
  debug: (m: string, f?: Record<string, unknown>) => write('debug', m, f),
  /** An INFO line printed at every level but silent: start-up and shutdown, which operators and scripts wait for. */
  notice: (m: string, f?: Record<string, unknown>) => {
    if (threshold !== 'silent') emit('info', format('info', m, f))
  },
}

/**
 * The access log's line, built as one string (the request hot path). Every value is safe to print bare: the method
 * is an HTTP token, the route a template of ours (or `<unmatched>`), the address parsed, the request id checked.
 */
export function accessLog(method: string, route: string, status: number, ms: number, ip: string, id: string): void {
  if (ORDER[threshold] < 3) return
  const time = timestamp()
  const duration = ms.toFixed(1)
  emit(
    'info',
    logFormat === 'json'
      ? `{"time":"${time}","level":"info","msg":"request","method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"status":${status},"ms":${duration},"ip":"${ip}","request_id":"${id}"}\n`
      : `${time} INFO request method=${method} route=${route} status=${status} ms=${duration} ip=${ip} id=${id}\n`,
  )
}
