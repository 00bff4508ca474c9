// The two table sets (src/**/tables.ts for SQLite, their PostgreSQL twins from db/pg/twins.ts) described in one
// neutral shape, so tests can compare them table by table, and the PostgreSQL set with a live catalog.
import { Glob } from 'bun'
import { join, relative } from 'node:path'
import { Column, is, SQL, StringChunk, Table } from 'drizzle-orm'
import { toSnakeCase } from 'drizzle-orm/casing'
import { IndexedColumn, getTableConfig as pgConfig, PgTable } from 'drizzle-orm/pg-core'
import { getTableConfig as sqliteConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import { pgTwin } from '../../src/db/pg/twins'

export const ROOT = join(import.meta.dir, '..', '..')

/** A column's name in SQL: drizzle.config.ts's `casing: 'snake_case'` for columns declared without one. */
export function columnName(column: Column): string {
  return column.keyAsName ? toSnakeCase(column.name) : column.name
}

/**
 * An SQL expression as text, columns by name. The dialects spell two things differently, named here once:
 * SQLite's `CAST(x AS INTEGER)` is PostgreSQL's `CAST(x AS bigint)` (both 64-bit), and a boolean column compared
 * with SQLite's `1` is compared with `true`.
 */
export function render(value: unknown, dialect: 'sqlite' | 'pg'): string {
  const text = (chunk: unknown): string => {
    if (is(chunk, Column)) return `"${columnName(chunk)}"`
    if (is(chunk, StringChunk)) return chunk.value.join('')
    if (is(chunk, SQL)) return chunk.queryChunks.map(text).join('')
    if (typeof chunk === 'string') return chunk
    return String(chunk)
  }
  const out = text(value).replace(/\s+/g, ' ').trim()
  return dialect === 'sqlite' ? out.replace(/ AS INTEGER\)/g, ' AS bigint)').replace(/ = 1$/, ' = true') : out
}

/** One part of an index: a column by name (PostgreSQL's with a non-default order or operator class), or an expression. */
function indexPart(part: unknown, dialect: 'sqlite' | 'pg'): string {
  if (is(part, Column)) return columnName(part)
  if (is(part, IndexedColumn)) {
    const name = part.keyAsName ? toSnakeCase(part.name ?? '') : (part.name ?? '')
    const { order, opClass } = (part.indexConfig ?? {}) as { order?: string; opClass?: string }
    return [name, order === 'desc' ? 'desc' : '', opClass ?? ''].filter(Boolean).join(' ')
  }
  return render(part, dialect)
}

export type ColumnShape = {
  name: string
  kind: string
  notNull: boolean
  primary: boolean
  /** Numbered by the database when omitted: SQLite's INTEGER PRIMARY KEY (rowid), PostgreSQL's identity. */
  autoNumbered: boolean
  /** The default as stored text or value; JSON defaults as their JSON text. */
  default?: unknown
  unique?: string
}

export type TableShape = {
  name: string
  columns: ColumnShape[]
  primaryKeys: { name: string; columns: string[] }[]
  uniqueConstraints: { name: string; columns: string[] }[]
  indexes: { name: string; unique: boolean; on: string[]; where?: string }[]
  foreignKeys: {
    name: string
    columns: string[]
    table: string
    references: string[]
    onDelete: string
    onUpdate: string
  }[]
}

const isJson = (column: Column): boolean => {
  try {
    const read = column.mapFromDriverValue('{"a":[1]}')
    return typeof read === 'object' && read !== null && (read as { a: number[] }).a[0] === 1
  } catch {
    return false
  }
}

function kindOf(column: Column, dialect: 'sqlite' | 'pg'): string {
  const type = column.columnType
  if (dialect === 'sqlite') {
    if (type === 'SQLiteText') return 'text'
    if (type === 'SQLiteTextJson') return 'json'
    if (type === 'SQLiteBoolean') return 'boolean'
    if (type === 'SQLiteInteger') return 'integer'
  } else {
    const sqlType = column.getSQLType()
    if (type === 'PgCustomColumn' && sqlType === 'text COLLATE "C"') return isJson(column) ? 'json' : 'text'
    if (type === 'PgBoolean') return 'boolean'
    if (type === 'PgInteger' || type === 'PgBigInt53') return 'integer'
  }
  return `unexpected ${type} (${column.getSQLType()})`
}

function defaultOf(column: Column, kind: string, dialect: 'sqlite' | 'pg'): unknown {
  const value = column.default
  if (value === undefined) return undefined
  if (is(value, SQL)) {
    const text = render(value, dialect)
    const literal = /^'((?:[^']|'')*)'$/.exec(text)
    return literal ? literal[1].replaceAll("''", "'") : `sql: ${text}`
  }
  return kind === 'json' ? JSON.stringify(value) : value
}

export function shapeOf(table: Table): TableShape {
  const dialect = is(table, SQLiteTable) ? 'sqlite' : is(table, PgTable) ? 'pg' : undefined
  if (!dialect) throw new Error('not a drizzle table')
  const config = dialect === 'sqlite' ? sqliteConfig(table as SQLiteTable) : pgConfig(table as PgTable)
  const names = (columns: Column[]) => columns.map(columnName)
  return {
    name: config.name,
    columns: config.columns.map((column) => {
      const kind = kindOf(column, dialect)
      const autoNumbered =
        dialect === 'sqlite'
          ? column.columnType === 'SQLiteInteger' && column.primary
          : column.generatedIdentity?.type === 'byDefault'
      const shape: ColumnShape = {
        name: columnName(column),
        kind,
        notNull: column.notNull,
        primary: column.primary,
        autoNumbered,
      }
      // An auto-numbered column's only default is its numbering.
      if (!autoNumbered && (column.hasDefault || column.default !== undefined))
        shape.default = defaultOf(column, kind, dialect)
      if (column.isUnique) shape.unique = column.uniqueName
      return shape
    }),
    primaryKeys: config.primaryKeys.map((pk) => ({ name: pk.getName(), columns: names(pk.columns) })),
    uniqueConstraints: config.uniqueConstraints.map((u) => ({ name: u.getName() ?? '', columns: names(u.columns) })),
    indexes: config.indexes
      .map((index) => {
        const c = index.config as { name: string; unique: boolean; columns: unknown[]; where?: SQL }
        const shape: TableShape['indexes'][number] = {
          name: c.name,
          unique: c.unique,
          on: c.columns.map((part) => indexPart(part, dialect)),
        }
        if (c.where) shape.where = render(c.where, dialect)
        return shape
      })
      .sort((a, b) => a.name.localeCompare(b.name)),
    foreignKeys: config.foreignKeys
      .map((fk) => {
        const ref = fk.reference()
        return {
          name: fk.getName(),
          columns: names(ref.columns),
          table:
            dialect === 'sqlite'
              ? sqliteConfig(ref.foreignTable as SQLiteTable).name
              : pgConfig(ref.foreignTable as PgTable).name,
          references: names(ref.foreignColumns),
          onDelete: fk.onDelete ?? 'no action',
          onUpdate: fk.onUpdate ?? 'no action',
        }
      })
      .sort((a, b) => a.name.localeCompare(b.name)),
  }
}

export type TableModule = { file: string; tables: Map<string, Table> }

/** Every tables.ts under src/, with its exported tables by export name. */
export async function sqliteModules(): Promise<TableModule[]> {
  const files = [...new Glob('**/tables.ts').scanSync({ cwd: join(ROOT, 'src') })].sort()
  return Promise.all(
    files.map(async (file) => {
      const exports = (await import(join(ROOT, 'src', file))) as Record<string, unknown>
      const tables = new Map<string, Table>()
      for (const [name, value] of Object.entries(exports)) if (is(value, SQLiteTable)) tables.set(name, value as Table)
      return { file: relative(ROOT, join(ROOT, 'src', file)), tables }
    }),
  )
}

/** The same modules, each table replaced by its PostgreSQL twin (db/pg/twins.ts). */
export async function pgModules(): Promise<TableModule[]> {
  return (await sqliteModules()).map(({ file, tables }) => ({
    file,
    tables: new Map([...tables].map(([name, table]) => [name, pgTwin(table as SQLiteTable) as unknown as Table])),
  }))
}
