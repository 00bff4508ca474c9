// Validation with paths: every problem is collected as `<path>: <message>` (paths like `[3].populations[0].e`).
import { isId64 } from '../core/snowflake'

export const NAME_MAX = 128

export type Json = Record<string, unknown>

export const at = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`
export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
const KEY = /^[\x21-\x7e]+$/

/** Collects every problem with its path, so a bad file is refused with all of them at once. */
export class Checker {
  readonly problems: string[] = []

  fail(path: string, message: string): undefined {
    this.problems.push(`${path}: ${message}`)
    return undefined
  }

  object(path: string, value: unknown, fields: readonly string[]): Json | undefined {
    if (!isObject(value)) return this.fail(path, 'must be an object')
    for (const key of Object.keys(value)) if (!fields.includes(key)) this.fail(at(path, key), 'unknown field')
    return value
  }

  array(path: string, value: unknown): unknown[] | undefined {
    return Array.isArray(value) ? value : this.fail(path, 'must be an array')
  }

  int(path: string, value: unknown, min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value)) return this.fail(path, 'must be an integer')
    if (value < min) return this.fail(path, `must be ≥ ${min}`)
    if (value > max) return this.fail(path, `must be ≤ ${max}`)
    return value
  }

  bool(path: string, value: unknown): boolean | undefined {
    return typeof value === 'boolean' ? value : this.fail(path, 'must be true or false')
  }

  key(path: string, value: unknown): string | undefined {
    if (typeof value !== 'string' || value.length === 0 || value.length > NAME_MAX || !KEY.test(value)) {
      return this.fail(path, `must be 1-${NAME_MAX} printable ASCII characters without spaces`)
    }
    return value
  }

  /**
   * Any 64-bit id (up to 2^64 - 1): definitions are the operator's and compared in JS, never in SQL, so a range may
   * end past the clients' ids (below 2^63, core/snowflake.ts) and a definition that loaded before still loads.
   */
  snowflake(path: string, value: unknown): string | undefined {
    return typeof value === 'string' && isId64(value)
      ? value
      : this.fail(path, 'must be a snowflake (a string of digits)')
  }

  string(path: string, value: unknown, max = 256): string | undefined {
    return typeof value === 'string' && value.length > 0 && value.length <= max
      ? value
      : this.fail(path, `must be a string of 1-${max} characters`)
  }
}
