// TypeBox validation failures -> Discord's nested form errors (errors.<field>._errors[{code, message}]).
import { addFieldError, errorTree, type ErrorTree, type FieldError } from '../core/errors'

type ValueError = { type: number; path: string; message: string; value?: unknown; schema: Record<string, any> }

// TypeBox ValueErrorType numbers (typebox 0.34 errors.ts).
const T = {
  ArrayMaxItems: 2, ArrayMinItems: 4, Array: 6, Boolean: 14, IntegerMaximum: 24, IntegerMinimum: 25, Integer: 27,
  Literal: 32, Null: 35, NumberMaximum: 38, NumberMinimum: 39, Number: 41, ObjectAdditionalProperties: 42,
  ObjectMaxProperties: 43, ObjectMinProperties: 44, ObjectRequiredProperty: 45, Object: 46, StringFormat: 50,
  StringMaxLength: 51, StringMinLength: 52, StringPattern: 53, String: 54, Union: 62,
}

function lengthMessage(min?: number, max?: number): FieldError {
  if (min !== undefined && max !== undefined) return { code: 'BASE_TYPE_BAD_LENGTH', message: `Must be between ${min} and ${max} in length.` }
  if (max !== undefined) return { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` }
  return { code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${min} or more in length.` }
}

export function describe(error: ValueError): FieldError {
  const s = error.schema ?? {}
  // A schema may carry its own Discord code: t.String({ error: 'CODE|message' }) is not used; `discord` is.
  if (s.discord && typeof s.discord === 'object') return s.discord as FieldError
  if (error.value === undefined) return { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }
  if (error.type === T.Union) return describeUnion(error)
  switch (error.type) {
    case T.ObjectRequiredProperty:
      return { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' }
    case T.StringMaxLength:
    case T.StringMinLength:
      return lengthMessage(s.minLength, s.maxLength)
    case T.ArrayMaxItems:
    case T.ArrayMinItems:
      return lengthMessage(s.minItems, s.maxItems)
    case T.ObjectMaxProperties:
      return { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${s.maxProperties} or fewer in length.` }
    case T.ObjectMinProperties:
      return { code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${s.minProperties} or more in length.` }
    case T.IntegerMaximum:
    case T.NumberMaximum:
      return { code: 'NUMBER_TYPE_MAX', message: `int value should be less than or equal to ${s.maximum}.` }
    case T.IntegerMinimum:
    case T.NumberMinimum:
      return { code: 'NUMBER_TYPE_MIN', message: `int value should be greater than or equal to ${s.minimum}.` }
    case T.Integer:
    case T.Number:
      return { code: 'NUMBER_TYPE_COERCE', message: `Value "${String(error.value)}" is not int.` }
    case T.Boolean:
      return { code: 'BOOLEAN_TYPE_CONVERT', message: 'Must be either true or false.' }
    case T.String:
      return { code: 'BASE_TYPE_STRING', message: 'Could not interpret value as string.' }
    case T.Array:
      return { code: 'LIST_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' }
    case T.Object:
      return { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }
    case T.Literal:
      return { code: 'BASE_TYPE_CHOICES', message: `Value must be one of ${JSON.stringify(s.const)}.` }
    case T.StringPattern:
    case T.StringFormat:
      return { code: 'BASE_TYPE_INVALID', message: 'Invalid value.' }
    case T.ObjectAdditionalProperties:
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
    if (bound.maximum !== undefined && value > bound.maximum) return describe({ ...error, type: T.NumberMaximum, schema: bound })
    if (bound.minimum !== undefined && value < bound.minimum) return describe({ ...error, type: T.NumberMinimum, schema: bound })
  }
  if (numeric) return describe({ ...error, type: T.Integer })
  const str = members.find((m) => m.type === 'string')
  if (str && typeof error.value === 'string') {
    if (str.maxLength !== undefined && error.value.length > str.maxLength) return describe({ ...error, type: T.StringMaxLength, schema: str })
    if (str.minLength !== undefined && error.value.length < str.minLength) return describe({ ...error, type: T.StringMinLength, schema: str })
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
