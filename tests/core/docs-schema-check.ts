// A strict JSON Schema check for the API docs tests: the keywords /api/docs/json uses, and nothing silently skipped
// (an unknown keyword is an error, so a schema the checker does not understand cannot pass). Stricter than JSON
// Schema on one point: an object schema with `properties` and no `additionalProperties` / `patternProperties` refuses
// keys it does not list, so an answer field the document does not name is found.

const ANNOTATIONS = new Set(['description', 'examples', 'example', 'title', 'default', 'nullable', 'deprecated'])
const KNOWN = new Set([
  ...ANNOTATIONS,
  'type',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'anyOf',
  'oneOf',
  'allOf',
  'const',
  'enum',
  'pattern',
  'format',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'maxProperties',
  'minProperties',
  'propertyNames',
])

type Schema = Record<string, any>

function typeOf(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function typeMatches(type: string, value: unknown): boolean {
  const actual = typeOf(value)
  return type === actual || (type === 'number' && actual === 'integer')
}

/** Every way `value` fails `schema`, each as "path: reason" (empty when it conforms). */
export function schemaErrors(schema: Schema, value: unknown, at = '$'): string[] {
  if (typeof schema !== 'object' || schema === null) return [`${at}: not a schema: ${JSON.stringify(schema)}`]
  const unknown = Object.keys(schema).filter((k) => !KNOWN.has(k))
  if (unknown.length) return [`${at}: keyword(s) the checker does not know: ${unknown.join(', ')}`]
  const errors: string[] = []
  if (schema.type !== undefined) {
    const types: string[] = [schema.type].flat()
    if (!types.some((t) => typeMatches(t, value)) && !(schema.nullable === true && value === null)) {
      return [`${at}: ${JSON.stringify(value)?.slice(0, 80)} is not ${types.join(' | ')}`]
    }
  }
  if ('const' in schema && value !== schema.const)
    errors.push(`${at}: ${JSON.stringify(value)} is not ${JSON.stringify(schema.const)}`)
  if (schema.enum && !schema.enum.includes(value))
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`)
  if (typeof value === 'string') {
    if (schema.pattern && !new RegExp(schema.pattern).test(value))
      errors.push(`${at}: ${JSON.stringify(value)} does not match ${schema.pattern}`)
    if (schema.minLength !== undefined && value.length < schema.minLength)
      errors.push(`${at}: shorter than ${schema.minLength}`)
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      errors.push(`${at}: longer than ${schema.maxLength}`)
    if (schema.format === 'date-time' && !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value))
      errors.push(`${at}: ${value} is not a date-time`)
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`)
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`)
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      errors.push(`${at}: fewer than ${schema.minItems} items`)
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      errors.push(`${at}: more than ${schema.maxItems} items`)
    // 2020-12: prefixItems by position, items for the rest.
    const prefix: Schema[] = schema.prefixItems ?? []
    value.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : schema.items
      if (itemSchema) errors.push(...schemaErrors(itemSchema, item, `${at}[${i}]`))
    })
  }
  if (
    typeOf(value) === 'object' &&
    (schema.properties ||
      schema.patternProperties ||
      schema.additionalProperties !== undefined ||
      schema.required ||
      schema.propertyNames)
  ) {
    const object = value as Record<string, unknown>
    for (const key of schema.required ?? []) if (!(key in object)) errors.push(`${at}: missing ${key}`)
    const keys = Object.keys(object)
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
      errors.push(`${at}: more than ${schema.maxProperties} keys`)
    for (const key of keys) {
      const path = `${at}.${key}`
      if (schema.propertyNames) errors.push(...schemaErrors(schema.propertyNames, key, `${path} (key)`))
      if (schema.properties && key in schema.properties) {
        errors.push(...schemaErrors(schema.properties[key], object[key], path))
        continue
      }
      const pattern = Object.entries<Schema>(schema.patternProperties ?? {}).find(([p]) => new RegExp(p).test(key))
      if (pattern) errors.push(...schemaErrors(pattern[1], object[key], path))
      else if (typeof schema.additionalProperties === 'object')
        errors.push(...schemaErrors(schema.additionalProperties, object[key], path))
      else if (schema.additionalProperties !== true) errors.push(`${path}: not documented`)
    }
  }
  if (schema.allOf) for (const part of schema.allOf) errors.push(...schemaErrors(part, value, at))
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    if (!schema[keyword]) continue
    const results = (schema[keyword] as Schema[]).map((option) => schemaErrors(option, value, at))
    const passing = results.filter((r) => r.length === 0).length
    if (passing === 0) errors.push(`${at}: matches none of ${keyword} (${results.map((r) => r[0]).join(' / ')})`)
    else if (keyword === 'oneOf' && passing > 1) errors.push(`${at}: matches ${passing} of oneOf`)
  }
  return errors
}

/** Parts of a schema that say nothing about a value (`{}`, or only annotations), by path: "untyped" answers. */
export function untypedParts(schema: Schema, at = '$'): string[] {
  if (!schema || typeof schema !== 'object') return []
  if (Object.keys(schema).every((k) => ANNOTATIONS.has(k))) return [at]
  const out: string[] = []
  for (const [key, value] of Object.entries<Schema>(schema.properties ?? {}))
    out.push(...untypedParts(value, `${at}.${key}`))
  for (const value of Object.values<Schema>(schema.patternProperties ?? {})) out.push(...untypedParts(value, `${at}.*`))
  if (typeof schema.additionalProperties === 'object') out.push(...untypedParts(schema.additionalProperties, `${at}.*`))
  if (schema.items) out.push(...untypedParts(schema.items, `${at}[]`))
  ;(schema.prefixItems ?? []).forEach((s: Schema, i: number) => out.push(...untypedParts(s, `${at}[${i}]`)))
  for (const keyword of ['anyOf', 'oneOf', 'allOf'])
    (schema[keyword] ?? []).forEach((s: Schema, i: number) => out.push(...untypedParts(s, `${at}|${i}`)))
  return out
}
