// A stored table, declared once for both databases (docs/DESIGN.md, "Adding a stored field"). Every src/**/tables.ts
// writes its tables with `table(...)` and the column kinds below:
// - the kinds are SQLite's column builders (drizzle-orm/sqlite-core), each tagged with the kind it is, so that the
//   modifiers are Drizzle's own (`.notNull()`, `.default()`, `.primaryKey()`, `.unique()`, `.references()`,
//   `.$type<T>()`) and the row types (`$inferSelect`, `$inferInsert`) are SQLite's, as the stores use them;
// - `table()` returns the SQLite table (what drizzle.config.ts and the stores read) and keeps its declaration, from
//   which db/pg/twins.ts builds the PostgreSQL twin when asked (drizzle.pg.config.ts, a server on PostgreSQL): same
//   columns in the same order, same constraints, indexes and foreign keys, each kind's PostgreSQL column.
// Nothing here imports the PostgreSQL side: a SQLite server never loads it (tests/db/pg-apart.test.ts).
import { type BuildColumns, type Column, type SQL, sql } from 'drizzle-orm'
import {
  index as sqliteIndex,
  integer,
  primaryKey as sqlitePrimaryKey,
  type SQLiteColumnBuilderBase,
  type SQLiteTableExtraConfigValue,
  type SQLiteTableWithColumns,
  sqliteTable,
  text as sqliteText,
  uniqueIndex as sqliteUniqueIndex,
} from 'drizzle-orm/sqlite-core'

/**
 * What a column is on both databases:
 * - text: SQLite TEXT; PostgreSQL `text COLLATE "C"` (byte order, as SQLite's BINARY collation);
 * - int: INTEGER; `integer` (values below 2^31: counts, positions, small enums);
 * - long: INTEGER; `bigint` read as a JS number (ms timestamps, bit fields, counters that may pass 2^31);
 * - bool: INTEGER 0/1; `boolean`;
 * - json: JSON in TEXT (JSON.stringify / JSON.parse); the same text, byte-ordered.
 * An integer primary key is numbered by the database when omitted: SQLite's rowid, PostgreSQL's identity.
 */
export type Kind = 'text' | 'int' | 'long' | 'bool' | 'json'

const kinds = new WeakMap<object, Kind>()

function tagged<B extends object>(builder: B, kind: Kind): B {
  kinds.set(builder, kind)
  return builder
}

/** The kind a column builder was declared with (db/pg/twins.ts); undefined: not declared through this file. */
export function kindOf(builder: object): Kind | undefined {
  return kinds.get(builder)
}

/** Text (names, hashes, URLs, ISO dates). */
export const text = () => tagged(sqliteText(), 'text')

/** A snowflake id (core/snowflake.ts), stored as its decimal text like Discord's JSON. */
export const snowflake = () => tagged(sqliteText(), 'text')

/** Text limited to these values (the row type is their union; the database does not check them). */
export const textEnum = <U extends string, T extends Readonly<[U, ...U[]]>>(values: T) =>
  tagged(sqliteText({ enum: values }), 'text')

/** An integer below 2^31 (positions, counts, small enums). */
export const int = () => tagged(integer(), 'int')

/** An integer that may pass 2^31 (bit fields, counters, autoincrement ids). */
export const long = () => tagged(integer(), 'long')

/** A time in ms since the epoch (a long). */
export const timestamp = () => tagged(integer(), 'long')

/** A boolean. */
export const bool = () => tagged(integer({ mode: 'boolean' }), 'bool')

/** A JSON value of type T, stored as its JSON text. */
export const json = <T>() => tagged(sqliteText({ mode: 'json' }).$type<T>(), 'json')

// ---- Indexes and table constraints, built for either dialect

/** An index as declared: `index(name).on(...columns or expressions)`, optionally `.where(condition)`. */
export class IndexDeclaration {
  condition?: SQL
  constructor(
    readonly name: string,
    readonly unique: boolean,
    readonly on: (Column | SQL)[],
  ) {}
  /** A partial index: the rows where the condition holds. */
  where(condition: SQL): this {
    this.condition = condition
    return this
  }
}

/** A primary key over several columns. */
export type PrimaryKeyDeclaration = { columns: Column[]; name?: string }

/** An index or a table constraint, built into the dialect's own by `table()` and db/pg/twins.ts. */
export type Extra = IndexDeclaration | PrimaryKeyDeclaration

const indexOn = (name: string, unique: boolean) => ({
  on: (...on: [Column | SQL, ...(Column | SQL)[]]) => new IndexDeclaration(name, unique, on),
})
export const index = (name: string) => indexOn(name, false)
export const uniqueIndex = (name: string) => indexOn(name, true)
export const primaryKey = (config: { columns: [Column, ...Column[]]; name?: string }): PrimaryKeyDeclaration => config

/**
 * What the two dialects spell differently in an index's SQL: a 64-bit integer type (SQLite's INTEGER, PostgreSQL's
 * bigint) and true (SQLite's 1).
 */
export type Spelling = { int64: SQL; true: SQL }
export const sqliteSpelling: Spelling = { int64: sql.raw('INTEGER'), true: sql.raw('1') }

/** The indexes and constraints of a table, from its columns (the dialect's) and the dialect's spelling. */
export type Extras<TColumns> = (t: TColumns, spell: Spelling) => Extra[]

export type Declaration = {
  name: string
  columns: Record<string, SQLiteColumnBuilderBase>
  extras?: Extras<Record<string, Column>>
}

const declarations = new Map<object, Declaration>()

/** The declaration of a table made by `table()` (db/pg/twins.ts builds its twin from it). */
export function declarationOf(table: object): Declaration | undefined {
  return declarations.get(table)
}

/** Every table declared so far, in declaration order (drizzle.pg.config.ts: the twins of every loaded table). */
export function declaredTables(): object[] {
  return [...declarations.keys()]
}

function sqliteExtra(extra: Extra): SQLiteTableExtraConfigValue {
  if (!(extra instanceof IndexDeclaration))
    return sqlitePrimaryKey({ columns: extra.columns as never, ...(extra.name ? { name: extra.name } : {}) })
  const built = (extra.unique ? sqliteUniqueIndex : sqliteIndex)(extra.name).on(...(extra.on as [never]))
  return extra.condition ? built.where(extra.condition) : built
}

/**
 * A table: its SQL name, its columns in order (the kinds above; a new column goes last, as ALTER TABLE adds it),
 * and its indexes and table constraints. Returns the SQLite table; db/pg/twins.ts gives its PostgreSQL twin.
 */
export function table<TName extends string, TColumns extends Record<string, SQLiteColumnBuilderBase>>(
  name: TName,
  columns: TColumns,
  extras?: Extras<BuildColumns<TName, TColumns, 'sqlite'>>,
): SQLiteTableWithColumns<{
  name: TName
  schema: undefined
  columns: BuildColumns<TName, TColumns, 'sqlite'>
  dialect: 'sqlite'
}> {
  for (const [key, builder] of Object.entries(columns))
    if (!kinds.has(builder)) throw new Error(`${name}.${key}: declare it with a kind of db/table.ts`)
  const built = sqliteTable(name, columns, extras && ((t) => extras(t, sqliteSpelling).map(sqliteExtra)))
  declarations.set(built, { name, columns, extras: extras as Declaration['extras'] })
  return built
}
