// Paging parameters of the query string (limit, before, after, around), judged here and reported as Discord's form
// errors (400 50035 with errors.<field>._errors): Elysia checks numeric query values one by one and loses the field
// name, so they are declared as strings and the error lands on the parameter (errors.limit._errors) as Discord's does.
import { t } from 'elysia'
import { formError } from '../core/errors'
import { isId64, isSnowflake, MAX_SNOWFLAKE } from '../core/snowflake'

/** A query parameter as declared in a route's schema (documented, checked by `paging`). */
export const queryString = (description: string) => t.Optional(t.String({ description }))

export type Paging = { limit: number; before?: string; after?: string; around?: string }
type Raw = { limit?: string; before?: string; after?: string; around?: string }

/**
 * limit within [1, max] (default `fallback`), and snowflake cursors; 400 50035 naming each bad parameter, with those a
 * route refused itself (`refused`: a parameter of its own, reported together).
 */
export function paging(
  query: Raw,
  max: number,
  fallback: number,
  refused: Record<string, [code: string, message: string]> = {},
): Paging {
  let limit = fallback
  if (query.limit !== undefined && query.limit !== '') {
    const n = /^-?\d+$/.test(query.limit.trim()) ? Number(query.limit) : Number.NaN
    if (!Number.isSafeInteger(n))
      refused.limit = ['NUMBER_TYPE_COERCE', `Value "${query.limit.slice(0, 64)}" is not int.`]
    else if (n < 1) refused.limit = ['NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.']
    else if (n > max) refused.limit = ['NUMBER_TYPE_MAX', `int value should be less than or equal to ${max}.`]
    else limit = n
  }
  const out: Paging = { limit }
  for (const field of ['before', 'after', 'around'] as const) {
    const value = query[field]
    if (value === undefined || value === '') continue
    if (!isId64(value)) refused[field] = ['NUMBER_TYPE_COERCE', `Value "${value.slice(0, 64)}" is not snowflake.`]
    // A cursor past every id (2^63 up to 2^64 - 1) is the last id: the page SQLite gave it (its CAST AS INTEGER
    // clamps), where PostgreSQL's cast to bigint would fail.
    else out[field] = isSnowflake(value) ? value : MAX_SNOWFLAKE
  }
  if (Object.keys(refused).length) throw formError(refused)
  return out
}
