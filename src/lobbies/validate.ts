// Checks TypeBox cannot express well (metadata maps: key count, key and value length; nullable) as Discord form errors.
import { addFieldError, errorTree, Errors } from '../core/errors'
import { MAX_METADATA_CHARS, MAX_METADATA_KEYS } from './limits'
import type { Metadata } from './tables'

export class FormCheck {
  private tree = errorTree()
  private failed = false

  add(path: string | readonly string[], code: string, message: string): void {
    addFieldError(this.tree, path, { code, message })
    this.failed = true
  }

  /** A metadata map: undefined stays undefined (not given), null stays null, otherwise string->string within limits. */
  metadata(path: string, value: unknown): Metadata | null | undefined {
    if (value === undefined || value === null) return value
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.add(path, 'DICT_TYPE_CONVERT', 'Only dictionaries may be used in a DictType')
      return undefined
    }
    const entries = Object.entries(value as Record<string, unknown>)
    if (entries.length > MAX_METADATA_KEYS) {
      this.add(path, 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_METADATA_KEYS} or fewer in length.`)
      return undefined
    }
    const kept: [string, string][] = []
    for (const [key, v] of entries) {
      if (key.length > MAX_METADATA_CHARS) {
        this.add(path, 'BASE_TYPE_MAX_LENGTH', `Keys must be ${MAX_METADATA_CHARS} or fewer in length.`)
        continue
      }
      if (typeof v !== 'string') {
        this.add([...path.split('.'), key], 'BASE_TYPE_STRING', 'Could not interpret value as string.')
        continue
      }
      if (v.length > MAX_METADATA_CHARS) {
        this.add([...path.split('.'), key], 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_METADATA_CHARS} or fewer in length.`)
        continue
      }
      kept.push([key, v])
    }
    // fromEntries defines own properties, so a "__proto__" key stays a key.
    return Object.fromEntries(kept)
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

  /** Throw 400 50035 with every collected error. */
  done(): void {
    if (this.failed) throw Errors.invalidFormBody(this.tree)
  }
}

/** Check one metadata field and throw at once (single-field bodies). */
export function checkMetadata(path: string, value: unknown): Metadata | null | undefined {
  const check = new FormCheck()
  const out = check.metadata(path, value)
  check.done()
  return out
}
