// The PostgreSQL twin of every table declared with db/table.ts: built from the same declaration, when first asked
// (a server on PostgreSQL swaps its stores' tables for them; drizzle.pg.config.ts generates drizzle-pg/ from them).
// Each kind's PostgreSQL column behaves as its SQLite one:
// - text (and JSON text) is `text COLLATE "C"`: compared and ordered byte by byte, as SQLite's BINARY collation does
//   (ids, names, usernames, hashes), whatever locale the operator's cluster was made with; lower() folds ASCII only;
// - JSON is that same text, written with JSON.stringify and read with JSON.parse (SQLite's `text({ mode: 'json' })`),
//   so what is stored is the same characters on both; its default is SQL text (`jsonDefault`), as drizzle-kit writes
//   a JSON value default of a custom column as `[object Object]`;
// - bool is `boolean`; int is `integer`; long is `bigint` read as a JS number (SQLite's INTEGER is 64-bit);
// - an integer primary key (SQLite's rowid, numbered when omitted) is an identity column.
// Only the PostgreSQL side imports this file: nothing of it is reachable from src/main.ts (tests/db/pg-apart.test.ts).
import { type Column, getTableName, is, SQL, sql, type Table } from 'drizzle-orm'
import {
  bigint,
  boolean,
  customType,
  index,
  integer,
  type PgColumn,
  type PgColumnBuilderBase,
  type PgTableExtraConfigValue,
  type PgTableWithColumns,
  pgTable,
  primaryKey,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from 'drizzle-orm/sqlite-core'
import { declarationOf, declaredTables, type Extra, IndexDeclaration, type Kind, kindOf, type Spelling } from '../table'

/** Byte-ordered text. */
const text = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
})

/** JSON in byte-ordered text. */
const jsonText = customType<{ data: unknown; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
  toDriver: (value) => JSON.stringify(value),
  fromDriver: (value) => JSON.parse(value),
})

/** The DEFAULT of a JSON text column: the value's JSON as an SQL string literal. */
function jsonDefault(value: unknown): SQL {
  return sql.raw(`'${JSON.stringify(value).replaceAll("'", "''")}'`)
}

const columnOf: Record<Kind, () => PgColumnBuilderBase> = {
  text: () => text(),
  json: () => jsonText(),
  bool: () => boolean(),
  int: () => integer(),
  long: () => bigint({ mode: 'number' }),
}

const pgSpelling: Spelling = { int64: sql.raw('bigint'), true: sql.raw('true') }

/** A SQLite table's twin, typed as PostgreSQL's table of the same columns (the same row types). */
export type PgTwin<T extends SQLiteTable> = PgTableWithColumns<{
  name: T['_']['name']
  schema: undefined
  dialect: 'pg'
  columns: {
    [K in keyof T['_']['columns']]: T['_']['columns'][K] extends SQLiteColumn<infer C, infer R, infer TT>
      ? PgColumn<C, R, TT>
      : never
  }
}>

const twins = new WeakMap<object, Table>()

/** The PostgreSQL twin of a table declared with db/table.ts `table()` (built once). */
export function pgTwin<T extends SQLiteTable>(sqliteTable: T): PgTwin<T> {
  let twin = twins.get(sqliteTable)
  if (!twin) {
    twin = build(sqliteTable)
    twins.set(sqliteTable, twin)
  }
  return twin as unknown as PgTwin<T>
}

/** The twin of a table of either dialect: a store's tables are swapped with it (db/dialect-tables.ts). */
export function twinOf(table: Table): Table {
  return declarationOf(table) ? (pgTwin(table as SQLiteTable) as unknown as Table) : table
}

/** The twin of every table declared so far, by table name (what drizzle-kit and the parity test read). */
export function pgTables(): Map<string, Table> {
  return new Map(declaredTables().map((t) => [getTableName(t as Table), pgTwin(t as SQLiteTable) as unknown as Table]))
}

/** The twin of a SQLite column: the column of the same key in its table's twin. */
function twinColumn(column: Column): Column {
  const table = (column as SQLiteColumn).table
  const key = Object.keys(declarationOf(table)?.columns ?? {}).find((k) => (table as never)[k] === column)
  if (!key) throw new Error(`${getTableName(table)}.${column.name}: references a column not declared with db/table.ts`)
  return (pgTwin(table) as unknown as Record<string, Column>)[key]
}

function build(sqliteTable: SQLiteTable): Table {
  const declaration = declarationOf(sqliteTable)
  if (!declaration) throw new Error(`${getTableName(sqliteTable)}: not declared with db/table.ts table()`)
  const { name, columns, extras } = declaration
  // Foreign keys are declared on their column (`.references()`): each goes on the twin's column, to the twin's.
  const references = new Map<Column, { to: Column; onDelete?: string; onUpdate?: string }>()
  for (const fk of getTableConfig(sqliteTable).foreignKeys) {
    const ref = fk.reference()
    if (ref.columns.length !== 1 || ref.name)
      throw new Error(`${name}: only a column's .references() is carried to PostgreSQL`)
    references.set(ref.columns[0], { to: ref.foreignColumns[0], onDelete: fk.onDelete, onUpdate: fk.onUpdate })
  }
  const pgColumns: Record<string, PgColumnBuilderBase> = {}
  for (const [key, builder] of Object.entries(columns)) {
    const kind = kindOf(builder)
    const column = (sqliteTable as unknown as Record<string, SQLiteColumn & { autoIncrement?: boolean }>)[key]
    if (!kind) throw new Error(`${name}.${key}: declare it with a kind of db/table.ts`)
    if (column.generated || column.onUpdateFn) throw new Error(`${name}.${key}: not carried to PostgreSQL`)
    let b: any = columnOf[kind]()
    if (column.primary) {
      b = b.primaryKey()
      if (kind === 'int' || kind === 'long') b = b.generatedByDefaultAsIdentity()
    }
    if (column.notNull && !column.primary) b = b.notNull()
    if (column.default !== undefined)
      b = b.default(kind === 'json' && !is(column.default, SQL) ? jsonDefault(column.default) : column.default)
    if (column.defaultFn) b = b.$defaultFn(column.defaultFn)
    if (column.isUnique) b = b.unique(column.uniqueName)
    const reference = references.get(column)
    if (reference) {
      const { to, onDelete, onUpdate } = reference
      b = b.references(() => twinColumn(to), { onDelete, onUpdate })
    }
    pgColumns[key] = b
  }
  return pgTable(name, pgColumns, extras && ((t) => extras(t, pgSpelling).map(pgExtra)))
}

function pgExtra(extra: Extra): PgTableExtraConfigValue {
  if (!(extra instanceof IndexDeclaration))
    return primaryKey({ columns: extra.columns as never, ...(extra.name ? { name: extra.name } : {}) })
  const built = (extra.unique ? uniqueIndex : index)(extra.name).on(...(extra.on as [never]))
  return extra.condition ? built.where(extra.condition) : built
}
