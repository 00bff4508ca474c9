// The rules a TypeBox schema cannot say, checked by hand and reported as Discord's form errors (400 50035 with
// errors.<field>._errors): one FormCheck collects every field error of a request and throws them together. Paging
// parameters of the query string (limit, before, after, around) are judged here too: Elysia checks numeric query
// values one by one and loses the field name, so they are declared as strings and the error lands on the parameter
// (errors.limit._errors) as Discord's does.
import { t } from 'elysia'
import { addFieldError, errorTree, Errors } from '../core/errors'

export class FormCheck {
  private tree = errorTree()
  private failed = false

  /** One field error; `path` as core/errors addFieldError takes it (client-supplied keys stay whole in a list). */
  add(path: string | readonly (string | number)[], code: string, message: string): void {
    addFieldError(this.tree, path, { code, message })
    this.failed = true
  }

  /** Whether a field error was added. */
  get hasErrors(): boolean {
    return this.failed
  }

  /** An optional, nullable integer within bounds (TypeBox unions would lose the bounds in the error). */
  int(path: string, value: unknown, min: number, max: number): number | null | undefined {
    if (value === undefined || value === null) return value
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      this.add(path, 'NUMBER_TYPE_COERCE', `Value "${String(value)}" is not int.`)
      return undefined
    }
    if (value < min) this.add(path, 'NUMBER_TYPE_MIN', `int value should be greater than or equal to ${min}.`)
    else if (value > max) this.add(path, 'NUMBER_TYPE_MAX', `int value should be less than or equal to ${max}.`)
    else return value
    return undefined
  }

  /**
   * A string-to-string map: undefined stays undefined (not given), null stays null, otherwise at most `maxKeys`
   * keys, keys at most `maxKeyChars` (default `maxChars`) and values at most `maxChars` long. The result has own
   * properties only, so "__proto__" stays a key. `path` "" is the body itself.
   */
  dict(
    path: string,
    value: unknown,
    { maxKeys, maxChars, maxKeyChars = maxChars }: { maxKeys: number; maxChars: number; maxKeyChars?: number },
  ): Record<string, string> | null | undefined {
    if (value === undefined || value === null) return value
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.add(path, 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType')
      return undefined
    }
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length > maxKeys) {
      this.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${maxKeys} or fewer in length.`)
      return undefined
    }
    const kept: [string, string][] = []
    const at = (key: string) => [...path.split('.').filter(Boolean), key]
    for (const [key, v] of entries) {
      if (key.length > maxKeyChars) {
        this.add(path, 'BASE_TYPE_MAX_LENGTH', `Keys must be ${maxKeyChars} or fewer in length.`)
        continue
      }
      if (typeof v !== 'string') {
        this.add(at(key), 'BASE_TYPE_STRING', 'Could not interpret value as string.')
        continue
      }
      if (v.length > maxChars) {
        this.add(at(key), 'BASE_TYPE_MAX_LENGTH', `Must be ${maxChars} or fewer in length.`)
        continue
      }
      kept.push([key, v])
    }
    return Object.fromEntries(kept)
  }

  /** Throw 400 50035 with every collected error. */
  done(): void {
    if (this.failed) throw Errors.invalidFormBody(this.tree)
  }
}

/** A query parameter as declared in a route's schema (documented, checked by `paging`). */
export const queryString = (description: string) => t.Optional(t.String({ description }))

export type Paging = { limit: number; before?: string; after?: string; around?: string }
type Raw = { limit?: string; before?: string; after?: string; around?: string }

const SNOWFLAKE = /^\d{1,20}$/

/** limit within [1, max] (default `fallback`), and snowflake cursors; 400 50035 naming each bad parameter. */
export function paging(query: Raw, max: number, fallback: number): Paging {
  const check = new FormCheck()
  let limit = fallback
  if (query.limit !== undefined && query.limit !== '') {
    const n = /^-?\d+$/.test(query.limit.trim()) ? Number(query.limit) : Number.NaN
    if (!Number.isSafeInteger(n))
      check.add(['limit'], 'NUMBER_TYPE_COERCE', `Value "${query.limit.slice(0, 64)}" is not int.`)
    else if (n < 1) check.add(['limit'], 'NUMBER_TYPE_MIN', 'int value should be greater than or equal to 1.')
    else if (n > max) check.add(['limit'], 'NUMBER_TYPE_MAX', `int value should be less than or equal to ${max}.`)
    else limit = n
  }
  const out: Paging = { limit }
  for (const field of ['before', 'after', 'around'] as const) {
    const value = query[field]
    if (value === undefined || value === '') continue
    if (SNOWFLAKE.test(value) && BigInt(value) < 2n ** 64n) out[field] = value
    else check.add([field], 'NUMBER_TYPE_COERCE', `Value "${value.slice(0, 64)}" is not snowflake.`)
  }
  check.done()
  return out
}
