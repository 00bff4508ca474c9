// The rules of an embed's single fields, which the schema (schemas.ts EmbedSchema) checks: URLs that parse as http,
// https or attachment://; timestamps in ISO 8601.
import type { FieldError } from '../core/errors'

const SCHEMES = new Set(['http:', 'https:', 'attachment:'])

export function embedUrlProblem(value: string): FieldError | undefined {
  if (URL.canParse(value) && SCHEMES.has(new URL(value).protocol)) return undefined
  return { code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }
}

/** A timestamp's time in ms (NaN when it is not ISO 8601 with a date first). */
export const parsedTime = (value: string) => (/^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) ? Date.parse(value) : Number.NaN)

export function timestampProblem(value: string): FieldError | undefined {
  if (!Number.isNaN(parsedTime(value))) return undefined
  return { code: 'DATE_TIME_TYPE_PARSE', message: `Could not parse ${value.slice(0, 64)}. Should be ISO8601.` }
}
