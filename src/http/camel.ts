// A route body's fields as the services name them: Discord's snake_case keys (`idle_timeout_seconds`) in camelCase
// (`idleTimeoutSeconds`, as the tables' columns are named). A service's input type is its route schema's, renamed
// (`CamelKeys<typeof Schema.static>`), so a field is declared once, in the schema; `camelKeys` renames a checked body.

/** `idle_timeout_seconds` -> `idleTimeoutSeconds`. */
export type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S

/** The same object type, its keys in camelCase (one level: nested objects keep theirs). */
export type CamelKeys<T> = { [K in keyof T as K extends string ? Camel<K> : K]: T[K] }

const camel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** A body with its keys in camelCase (one level). */
export function camelKeys<T extends object>(body: T): CamelKeys<T> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) out[camel(key)] = value
  return out as CamelKeys<T>
}
