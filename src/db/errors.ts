// The database's errors as the domains and the logs need them, the same on SQLite and PostgreSQL. Drizzle wraps a
// driver's error in one that carries the failed query and its parameters (password hashes, token hashes, addresses):
// those parameters never reach a log line.

type Wrapped = { query?: unknown; params?: unknown; cause?: unknown; message?: unknown }

/** The driver's own error under Drizzle's wrapping (or the error itself). */
function driverError(error: unknown): Wrapped & Record<string, unknown> {
  const e = error as Wrapped
  return (e && typeof e.query === 'string' && e.cause ? e.cause : error) as Wrapped & Record<string, unknown>
}

/**
 * For a unique index's refusal, the `table.column` it guards (`users.email`); undefined for any other error.
 * SQLite says "UNIQUE constraint failed: users.email"; PostgreSQL answers 23505 with the table and "Key (email)=(…)".
 */
export function uniqueViolation(error: unknown): string | undefined {
  const e = driverError(error)
  if (e?.code === '23505') {
    const column = /^Key \(([^)]+)\)/.exec(String(e.detail ?? ''))?.[1]
    return column && typeof e.table_name === 'string' ? `${e.table_name}.${column}` : undefined
  }
  return /UNIQUE constraint failed: ([\w.]+)/.exec(String(e?.message ?? ''))?.[1]
}

/** An error for a log line: a failed query's text and the database's answer, never the query's parameters. */
export function loggableError(error: unknown): string {
  const e = error as Wrapped & { stack?: unknown }
  if (e && typeof e.query === 'string' && e.cause) {
    const cause = e.cause as { stack?: unknown }
    return `Failed query: ${e.query}\n${String(cause?.stack ?? cause)}`
  }
  return String(e?.stack ?? error)
}
