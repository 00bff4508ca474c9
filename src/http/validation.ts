// TypeBox validation failures -> Discord's nested form errors (errors.<field>._errors[{code, message}]).
import { type Static, type TSchema, TransformKind } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { HasTransform } from '@sinclair/typebox/value'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { addFieldError, Errors, errorTree, type ErrorTree, type FieldError } from '../core/errors'

type ValueError = { type: number; path: string; message: string; value?: unknown; schema: Record<string, any> }

function lengthMessage(min?: number, max?: number): FieldError {
  if (min !== undefined && max !== undefined)
    return { code: 'BASE_TYPE_BAD_LENGTH', message: `Must be between ${min} and ${max} in length.` }
  if (max !== undefined) return { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` }
  return { code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${min} or more in length.` }
}

export function describe(error: ValueError): FieldError {
  const s = error.schema ?? {}
  // A schema may carry its own Discord code: t.String({ error: 'CODE|message' }) is not used; `discord` is.
  if (s.discord && typeof s.discord === 'object') return s.discord as FieldError
  if (error.value === undefined) return { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }
  if (error.type === ValueErrorType.Union) return describeUnion(error)
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }
    case ValueErrorType.StringMaxLength:
    case ValueErrorType.StringMinLength:
      return lengthMessage(s.minLength, s.maxLength)
    case ValueErrorType.ArrayMaxItems:
    case ValueErrorType.ArrayMinItems:
      return lengthMessage(s.minItems, s.maxItems)
    case ValueErrorType.ObjectMaxProperties:
      return { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${s.maxProperties} or fewer in length.` }
    case ValueErrorType.ObjectMinProperties:
      return { code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${s.minProperties} or more in length.` }
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMaximum:
      return { code: 'NUMBER_TYPE_MAX', message: `int value should be less than or equal to ${s.maximum}.` }
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.NumberMinimum:
      return { code: 'NUMBER_TYPE_MIN', message: `int value should be greater than or equal to ${s.minimum}.` }
    case ValueErrorType.Integer:
    case ValueErrorType.Number:
      return { code: 'NUMBER_TYPE_COERCE', message: `Value "${String(error.value)}" is not int.` }
    case ValueErrorType.Boolean:
      return { code: 'BOOLEAN_TYPE_CONVERT', message: 'Must be either true or false.' }
    case ValueErrorType.String:
      return { code: 'BASE_TYPE_STRING', message: 'Could not interpret value as string.' }
    case ValueErrorType.Array:
      return { code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }
    case ValueErrorType.Object:
      return { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }
    case ValueErrorType.Literal:
      return { code: 'BASE_TYPE_CHOICES', message: `Value must be one of ${JSON.stringify(s.const)}.` }
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return { code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }
    case ValueErrorType.ObjectAdditionalProperties:
      return { code: 'UNKNOWN_FIELD', message: 'This field is not allowed.' }
    default:
      return { code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }
  }
}

// Elysia's t.Integer/t.Numeric are unions (number, or a numeric string); judge the value against the bounds ourselves.
function describeUnion(error: ValueError): FieldError {
  const s = error.schema ?? {}
  const members: Record<string, any>[] = s.anyOf ?? []
  const numeric = members.some((m) => m.type === 'integer' || m.type === 'number')
  const value = typeof error.value === 'string' && error.value.trim() !== '' ? Number(error.value) : error.value
  if (numeric && typeof value === 'number' && Number.isFinite(value)) {
    const bound = { ...members.find((m) => m.type === 'integer' || m.type === 'number'), ...s }
    if (bound.maximum !== undefined && value > bound.maximum)
      return describe({ ...error, type: ValueErrorType.NumberMaximum, schema: bound })
    if (bound.minimum !== undefined && value < bound.minimum)
      return describe({ ...error, type: ValueErrorType.NumberMinimum, schema: bound })
  }
  if (numeric) return describe({ ...error, type: ValueErrorType.Integer })
  const str = members.find((m) => m.type === 'string')
  if (str && typeof error.value === 'string') {
    if (str.maxLength !== undefined && error.value.length > str.maxLength)
      return describe({ ...error, type: ValueErrorType.StringMaxLength, schema: str })
    if (str.minLength !== undefined && error.value.length < str.minLength)
      return describe({ ...error, type: ValueErrorType.StringMinLength, schema: str })
  }
  return { code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }
}

/** Build the nested error tree; one error per field (the first TypeBox reports), paths /a/0/b -> a.0.b. */
export function validationTree(errors: ValueError[]): ErrorTree {
  const tree = errorTree()
  const seen = new Set<string>()
  for (const error of errors) {
    // A required field also fails its own type check; report it once.
    const pointer = error.path ?? ''
    if (seen.has(pointer)) continue
    seen.add(pointer)
    // Segments stay whole: a client's key "a.b" is one field, not two.
    addFieldError(tree, pointer.split('/').filter(Boolean).map(unescapePointer), describe(error))
  }
  return tree
}

function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~')
}

/** As many errors as Elysia's ValidationError reports (its MAX_ERRORS). */
const MAX_ERRORS = 64

function firstErrors(found: Iterable<unknown>): ValueError[] {
  const errors: ValueError[] = []
  for (const error of found) if (errors.push(error as ValueError) >= MAX_ERRORS) break
  return errors
}

/** What the error hook gets of Elysia's ValidationError. */
export type ElysiaValidationError = {
  type: string
  all: ValueError[]
  validator?: { Errors?: (value: unknown) => Iterable<unknown> }
}

/**
 * The error tree of a failed Elysia body check, judged on the body as sent. Elysia's cleaner rewrites the body to the
 * schema's shape before its check (`"members": "ab"` becomes a list of two objects without ids), so its own errors
 * can name paths the client never sent. Asked again on the sent body, TypeBox gives one error per wrong value, at
 * its path, and does not look inside it. Unknown fields are left out, as the cleaner drops them.
 */
export function elysiaValidationTree(error: ElysiaValidationError, sentBody: unknown): ErrorTree {
  if (error.type === 'body' && sentBody !== undefined && sentBody !== null && error.validator?.Errors) {
    const errors = firstErrors(error.validator.Errors(sentBody)).filter(
      (e) => e.type !== ValueErrorType.ObjectAdditionalProperties,
    )
    if (errors.length) return validationTree(errors)
  }
  return validationTree(error.all)
}

/**
 * A route's body check, for a route that checks its body itself rather than through Elysia's `body` hook (a lane
 * route, which Bun's router answers without Elysia, and its Elysia twin call the same check). Compiled once. Judged
 * as Elysia judges a body: an empty or `null` body is an empty object (its required fields are missing), fields the
 * schema does not name are let through (Elysia's cleaner drops them; handlers read only named fields), transforms
 * are applied, and a failure is Discord's 50035 with the same error tree.
 */
export function bodyCheck<T extends TSchema>(schema: T): (body: unknown) => Static<T> {
  const compiled = TypeCompiler.Compile(schema)
  // Decoding walks the whole value (~1 µs for a message): done only when a field with a transform is there.
  const properties: Record<string, TSchema> = schema.type === 'object' ? (schema.properties ?? {}) : {}
  const transformed = Object.keys(properties).filter((key) => HasTransform(properties[key], []))
  const always = TransformKind in schema || (HasTransform(schema, []) && transformed.length === 0)
  const decode = (value: Record<string, unknown>) => always || transformed.some((key) => value[key] !== undefined)
  return (body) => {
    const value = body ?? {}
    // Decoded as Elysia decodes a body: its transforms applied (t.Integer turns a numeric string into a number).
    if (compiled.Check(value)) return decode(value as Record<string, unknown>) ? compiled.Decode(value) : value
    throw Errors.invalidFormBody(validationTree(firstErrors(compiled.Errors(value))))
  }
}
