// Running Drizzle's prepared statements on bun:sqlite without its per-call work (db/client.ts prepared()).
import { type SQLQueryBindings, Statement } from 'bun:sqlite'
import { Column, is, noopDecoder, Param, Placeholder, SQL, Subquery } from 'drizzle-orm'

/** What a Drizzle bun-sqlite prepared query holds (drizzle-orm/bun-sqlite/session.js, PreparedQuery). */
type DrizzlePrepared = {
  stmt: Statement
  query: { params: unknown[] }
  fields?: { path: string[]; field: unknown }[]
  customResultMapper?: unknown
  joinsNotNullableMap?: Record<string, boolean>
}

type Decoder = { mapFromDriverValue(value: unknown): unknown }

/** How each parameter is filled: a constant, a placeholder, or a placeholder through a column's encoder. */
function compileParams(params: unknown[]): ((values: Record<string, unknown>) => unknown[]) | undefined {
  const fillers = params.map((p): ((values: Record<string, unknown>) => unknown) => {
    const named = (name: string, encode?: (v: unknown) => unknown) => (values: Record<string, unknown>) => {
      if (!(name in values)) throw new Error(`No value for placeholder "${name}" was provided`)
      return encode ? encode(values[name]) : values[name]
    }
    if (is(p, Placeholder)) return named(p.name)
    if (is(p, Param) && is(p.value, Placeholder)) {
      const encoder = p.encoder
      return named(p.value.name, (v) => encoder.mapToDriverValue(v))
    }
    return () => p
  })
  if (fillers.length === 0) return () => []
  return (values) => fillers.map((fill) => fill(values))
}

/** Drizzle's mapResultRow for one fixed list of fields, resolved once: keys, and a decoder only where one is needed. */
function compileRow(
  fields: { path: string[]; field: unknown }[],
): ((row: unknown[]) => Record<string, unknown>) | undefined {
  if (fields.some((f) => f.path.length < 1 || f.path.length > 2)) return undefined
  const identity = (d: Decoder) =>
    d.mapFromDriverValue === Column.prototype.mapFromDriverValue ||
    d.mapFromDriverValue === noopDecoder.mapFromDriverValue
  const columns = fields.map(({ path, field }) => {
    const f = field as { decoder?: Decoder; sql?: { decoder: Decoder }; _?: { sql: { decoder: Decoder } } }
    const decoder: Decoder = is(field, Column)
      ? (field as Decoder)
      : is(field, SQL)
        ? f.decoder!
        : is(field, Subquery)
          ? f._!.sql.decoder
          : f.sql!.decoder
    return {
      outer: path.length === 2 ? path[0] : undefined,
      key: path[path.length - 1],
      decoder: identity(decoder) ? undefined : decoder,
    }
  })
  return (row) => {
    const result: Record<string, unknown> = {}
    for (let i = 0; i < columns.length; i++) {
      const { outer, key, decoder } = columns[i]
      const raw = row[i]
      const value = raw === null || decoder === undefined ? raw : decoder.mapFromDriverValue(raw)
      if (outer === undefined) result[key] = value
      else ((result[outer] ??= {}) as Record<string, unknown>)[key] = value
    }
    return result
  }
}

/**
 * A Drizzle prepared query whose get/all/values/run call the bun:sqlite statement directly: the parameters are
 * filled and the rows mapped by functions compiled once, where Drizzle resolves every parameter and every column
 * again on each call (about a third of a 50-row read). Same results as Drizzle's (same statement, same decoders);
 * any shape it does not cover (custom mappers, left joins, deeper nesting) keeps Drizzle's own methods. It reads
 * Drizzle's private fields: tests/db/direct.test.ts fails when an upgrade moves them (instead of falling back silently).
 */
export function direct<T>(query: T): T {
  const q = query as unknown as DrizzlePrepared
  if (
    !q ||
    typeof q !== 'object' ||
    !(q.stmt instanceof Statement) ||
    !Array.isArray(q.query?.params) ||
    q.customResultMapper
  )
    return query
  const bind = compileParams(q.query.params)
  if (!bind) return query
  const stmt = q.stmt
  const overrides: Record<string, (values?: Record<string, unknown>) => unknown> = {
    run: (values = {}) => stmt.run(...(bind(values) as SQLQueryBindings[])),
    values: (values = {}) => stmt.values(...(bind(values) as SQLQueryBindings[])),
  }
  const nullable = Object.values(q.joinsNotNullableMap ?? {}).some((notNull) => !notNull)
  const mapRow = q.fields && !nullable ? compileRow(q.fields) : undefined
  if (mapRow) {
    overrides.get = (values = {}) => {
      const row = stmt.values(...(bind(values) as SQLQueryBindings[]))[0]
      return row === undefined ? undefined : mapRow(row as unknown[])
    }
    overrides.all = (values = {}) =>
      stmt.values(...(bind(values) as SQLQueryBindings[])).map((row) => mapRow(row as unknown[]))
  }
  return Object.assign(Object.create(q), overrides) as T
}
