// TypeBox validation failures -> Discord's nested form errors (errors.<field>._errors[{code, message}]), and the
// field types whose rules TypeBox's own cannot say the way Discord reports them: nullable bounded integers and
// strings, string dictionaries (Dict), snowflakes, and a schema with a rule of its own (Refine). A schema carries
// every static rule of its field: the route's check (bodyCheck, or Elysia's from the same schema) reports them, and
// the API document shows them. Checks that need the database or the network stay in the handlers (formError).
import {
  Kind,
  type SchemaOptions,
  type Static,
  type TSchema,
  type TUnsafe,
  TransformKind,
  Type,
  TypeRegistry,
} from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { HasTransform } from '@sinclair/typebox/value'
import { ValueErrorType } from '@sinclair/typebox/errors'
import { addFieldError, Errors, errorTree, type ErrorTree, type FieldError } from '../core/errors'
import { isSnowflake } from '../core/snowflake'

type ValueError = {
  type: number
  path: string
  message: string
  value?: unknown
  schema: Record<string | symbol, any>
  /** A union's failures, one list per member. */
  errors?: Iterable<ValueError>[]
}
/** A field error at its path (client keys whole). */
type Found = [at: string[], error: FieldError]

function lengthMessage(min?: number, max?: number): FieldError {
  if (min !== undefined && max !== undefined)
    return { code: 'BASE_TYPE_BAD_LENGTH', message: `Must be between ${min} and ${max} in length.` }
  if (max !== undefined) return { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` }
  return { code: 'BASE_TYPE_MIN_LENGTH', message: `Must be ${min} or more in length.` }
}

export function describe(error: ValueError): FieldError {
  const s = error.schema ?? {}
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
// A union of literals is a choice.
function describeUnion(error: ValueError): FieldError {
  const s = error.schema ?? {}
  const members: Record<string, any>[] = s.anyOf ?? []
  if (members.length && members.every((m) => 'const' in m))
    return {
      code: 'BASE_TYPE_CHOICES',
      message: `Value must be one of ${JSON.stringify(members.map((m) => m.const))}.`,
    }
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

/**
 * Discord's field errors of TypeBox's errors: one per path TypeBox names (the first it reports there), at that path,
 * in its order. A custom kind (below) says its own, possibly at paths inside the value (a dictionary's keys); a
 * nullable field that is not null is judged as its other type (`t.Nullable(t.Integer({ maximum: 5 }))` given 6 is
 * NUMBER_TYPE_MAX, not "invalid").
 */
function fieldErrors(errors: Iterable<ValueError>): Found[] {
  const found: Found[] = []
  const seen = new Set<string>()
  for (const error of notNull(errors)) {
    // A required field also fails its own type check; report it once.
    const pointer = error.path ?? ''
    if (seen.has(pointer)) continue
    seen.add(pointer)
    // Segments stay whole: a client's key "a.b" is one field, not two.
    const at = pointer.split('/').filter(Boolean).map(unescapePointer)
    // A missing value is missing, whatever its kind.
    const explain =
      error.type === ValueErrorType.Kind && error.value !== undefined ? explainers.get(error.schema[Kind]) : undefined
    if (explain) for (const [below, e] of explain(error.schema, error.value)) found.push([[...at, ...below], e])
    else found.push([at, describe(error)])
  }
  return found
}

/** A nullable field's failure, when the value is not null, as the failures of its other type. */
function* notNull(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const error of errors) {
    const variants: Record<string, any>[] = error.type === ValueErrorType.Union ? (error.schema.anyOf ?? []) : []
    const other = variants.findIndex((v) => v.type !== 'null')
    const nullable = variants.length === 2 && variants.some((v) => v.type === 'null')
    if (nullable && error.value !== null && error.errors?.[other]) yield* notNull(error.errors[other])
    else yield error
  }
}

/** Build the nested error tree of TypeBox's errors (fieldErrors); paths /a/0/b -> a.0.b. */
export function validationTree(errors: ValueError[]): ErrorTree {
  const tree = errorTree()
  for (const [at, error] of fieldErrors(errors)) addFieldError(tree, at, error)
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

// ---- field types whose rules TypeBox's own cannot say as Discord does

/** What a custom kind says of a value it refused: Discord's errors, each at its path below the value ([]: itself). */
type Explain = (schema: Record<string, any>, value: unknown) => Found[]
const explainers = new Map<string, Explain>()

/** A custom kind: its check (TypeCompiler's and Elysia's checks call it) and, for a value it refused, its errors. */
function kind(name: string, check: (schema: Record<string, any>, value: unknown) => boolean, explain: Explain): void {
  if (TypeRegistry.Has(name)) throw new Error(`the schema kind ${name} exists already`)
  TypeRegistry.Set(name, check)
  explainers.set(name, explain)
}

const maxLength = (max: number): FieldError => lengthMessage(undefined, max)

/** An integer within [minimum, maximum], or null. */
export const NullableInt = (minimum: number, maximum: number, options?: SchemaOptions) =>
  Type.Union([Type.Integer({ minimum, maximum }), Type.Null()], options)

/** A string of at most `max` characters, or null. */
export const NullableString = (max: number, options?: SchemaOptions) =>
  Type.Union([Type.String({ maxLength: max }), Type.Null()], options)

/** A dictionary's limits: at most `maxKeys` keys, keys up to `maxKeyChars` (default `maxChars`), values up to `maxChars`. */
export type DictLimits = { maxKeys: number; maxChars: number; maxKeyChars?: number }

/**
 * A string-to-string dictionary within limits (Discord's metadata), or null. The check reads the limits the document
 * shows (maxProperties, propertyNames, additionalProperties). The handler gets the object as sent, its own keys only:
 * "__proto__" stays a key (JSON.parse makes it an own property, and nothing copies it into a plain object).
 */
export function Dict(limits: DictLimits, options?: SchemaOptions): TUnsafe<Record<string, string> | null> {
  const { maxKeys, maxChars, maxKeyChars = maxChars } = limits
  return Type.Unsafe({
    ...options,
    [Kind]: 'Dict',
    // OpenAPI 3.1's nullable; a list of types is also what Elysia's cleaner passes through untouched.
    type: ['object', 'null'],
    maxProperties: maxKeys,
    propertyNames: { maxLength: maxKeyChars },
    additionalProperties: { type: 'string', maxLength: maxChars },
  })
}

/** A dictionary's errors (none: undefined): too many keys stops there; then each long key, and each bad value. */
function dictErrors(s: Record<string, any>, value: unknown): Found[] | undefined {
  if (value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value))
    return [[[], { code: 'DICT_TYPE_CONVERT', message: 'Only dictionaries may be used in a DictType' }]]
  const keys = Object.keys(value)
  if (keys.length > s.maxProperties) return [[[], maxLength(s.maxProperties)]]
  const maxKeyChars: number = s.propertyNames.maxLength
  const maxChars: number = s.additionalProperties.maxLength
  let found: Found[] | undefined
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key]
    if (key.length > maxKeyChars)
      (found ??= []).push([
        [],
        { code: 'BASE_TYPE_MAX_LENGTH', message: `Keys must be ${maxKeyChars} or fewer in length.` },
      ])
    else if (typeof v !== 'string')
      (found ??= []).push([[key], { code: 'BASE_TYPE_STRING', message: 'Could not interpret value as string.' }])
    else if (v.length > maxChars) (found ??= []).push([[key], maxLength(maxChars)])
  }
  return found
}
kind(
  'Dict',
  (s, value) => dictErrors(s, value) === undefined,
  (s, value) => dictErrors(s, value) ?? [],
)

/** A snowflake (an id: up to 20 digits, at most 2^63 - 1: core/snowflake.ts) as a string; anything else "is not
 * snowflake", as Discord says. */
export const Snowflake = (options?: SchemaOptions): TUnsafe<string> =>
  Type.Unsafe({ ...options, [Kind]: 'Snowflake', type: 'string', pattern: '^[0-9]{1,20}$' })
kind(
  'Snowflake',
  (_, value) => isSnowflake(value),
  (_, value) => [[[], { code: 'NUMBER_TYPE_COERCE', message: `Value "${String(value)}" is not snowflake.` }]],
)

/**
 * `schema` with a rule of its own (a URL's form, a username's characters), registered as the kind `name`: a value
 * passes when it passes `schema` and then `problem` finds nothing in it (null is not asked). The document shows
 * `schema`; a rule that needs the database or the network is not one of these (the handler's, with formError).
 */
export function Refine<T extends TSchema>(
  name: string,
  schema: T,
  problem: (value: NonNullable<Static<T>>) => FieldError | undefined,
): T {
  const base = TypeCompiler.Compile(schema)
  const judge = (value: unknown) => (value === null ? undefined : problem(value as NonNullable<Static<T>>))
  kind(
    name,
    (_, value) => base.Check(value) && judge(value) === undefined,
    (_, value) => {
      if (!base.Check(value)) return fieldErrors(firstErrors(base.Errors(value)))
      const error = judge(value)
      return error ? [[[], error]] : []
    },
  )
  return { ...schema, [Kind]: name }
}
