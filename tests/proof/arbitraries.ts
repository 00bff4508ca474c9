// fast-check arbitraries for fuzzing the REST API: values shaped by a route's JSON schema (TypeBox schemas are JSON
// Schema), then mutated — wrong types, huge strings and numbers, deep nesting, prototype keys, lone surrogates, null
// bytes, invalid UTF-8, empty and duplicate keys — as JSON text and as bytes.
import fc from 'fast-check'

type Schema = Record<string, any> | null | undefined

const encoder = new TextEncoder()

function latin1Char(code: number): string {
  return String.fromCharCode(code)
}

export const latin1 = fc
  .array(
    fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f),
    { maxLength: 40 },
  )
  .map((codes) => codes.map(latin1Char).join(''))

/** Strings of every kind: ASCII, any code point (lone surrogates included), graphemes, and the nasty ones. */
export const anyString = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 10 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      'a\u0000b',
      '\ud800',
      '\udfff',
      'x\ud83dy',
      '\u202e',
      '\ufeff',
      '%00',
      '%ff',
      '../../etc/passwd',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      '${7*7}',
      "' OR 1=1 --",
      '"; DROP TABLE users; --',
      '<script>alert(1)</script>',
      '@me',
      '0',
      '-1',
      '1e400',
      'NaN',
      'Infinity',
      'null',
      'true',
      '18446744073709551616',
      '9223372036854775807',
      '99999999999999999999999',
    ),
  },
)

export const hugeString = fc
  .constantFrom(2_000, 70_000, 300_000)
  .chain((n) => fc.constantFrom('a'.repeat(n), '\u00e9'.repeat(n / 2), '\ud800'.repeat(n / 4), '🙂'.repeat(n / 4)))

export const hugeNumber = fc.constantFrom(
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  Number.MIN_VALUE,
  -0,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  2 ** 63,
  2 ** 64,
  1e21,
  0.5,
  -1,
  1.0000000000000002,
)

const snowflakeLike = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String), fc.stringMatching(/^[0-9]{1,25}$/))

/** Deeply nested arrays or objects (as JSON text: a JS value this deep would break the generator itself). */
export const deepJson = fc
  .tuple(fc.constantFrom(50, 1000, 10_000, 200_000), fc.boolean())
  .map(([depth, objects]) =>
    objects ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth),
  )

/** A JSON value of the wrong kind for anything. */
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  hugeNumber,
  anyString,
  hugeString,
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.oneof(fc.integer(), anyString, fc.constant(null)), { maxLength: 5 }),
  fc.array(fc.constant('x'), { minLength: 26, maxLength: 300 }),
  fc.dictionary(anyString, fc.oneof(anyString, fc.integer(), fc.constant(null)), { maxKeys: 5 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.constant('v'), { minKeys: 26, maxKeys: 60 }),
  fc.jsonValue({ maxDepth: 3 }),
)

let knownIds: string[] = ['1']
/** IDs that exist on the server under test, used where a body names a user, channel or other object. */
export function setKnownIds(ids: string[]): void {
  knownIds = ids
}

const realistic: Record<string, () => fc.Arbitrary<unknown>> = {
  email: () => fc.oneof(fc.emailAddress(), fc.constant('someone@example.test')),
  login: () => fc.oneof(fc.emailAddress(), fc.constant('+15555550100')),
  password: () => fc.string({ minLength: 8, maxLength: 72 }),
  new_password: () => fc.string({ minLength: 8, maxLength: 72 }),
  username: () => fc.stringMatching(/^[a-z0-9_.]{2,32}$/),
  global_name: () => fc.string({ minLength: 1, maxLength: 32 }),
  date_of_birth: () =>
    fc
      .date({ min: new Date('1900-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10)),
  consent: () => fc.constant(true),
  phone: () => fc.constantFrom('+15555550100', '+447700900123', '+1555'),
  code: () => fc.oneof(fc.stringMatching(/^[0-9]{6}$/), fc.stringMatching(/^[a-z0-9]{8}$/)),
  content: () => fc.string({ minLength: 1, maxLength: 200 }),
  id: () => fc.constantFrom(...knownIds),
  channel_id: () => fc.oneof(fc.constantFrom(...knownIds), fc.constant(null)),
  user_id: () => fc.constantFrom(...knownIds),
  guild_id: () => fc.constantFrom(...knownIds),
  session_id_hashes: () => fc.array(fc.base64String({ maxLength: 44 }), { minLength: 1, maxLength: 3 }),
}

function hinted(key: string | undefined, schema: Schema): fc.Arbitrary<unknown> | undefined {
  const description = String(schema?.description ?? '')
  if (key && Object.hasOwn(realistic, key) && schema?.type !== 'object')
    return fc.oneof({ weight: 3, arbitrary: realistic[key]() }, { weight: 1, arbitrary: plain(schema, key) })
  if (key && /metadata/.test(key))
    return fc.oneof(
      fc.constant(null),
      fc.dictionary(fc.string({ maxLength: 30 }), fc.string({ maxLength: 60 }), { maxKeys: 8 }),
    )
  if (/integer|bit field/.test(description)) return fc.oneof(fc.integer({ min: -2, max: 700_000 }), fc.constant(null))
  if (/boolean/.test(description)) return fc.oneof(fc.boolean(), fc.constant(null))
  if (/snowflake/.test(description)) return snowflakeLike
  return undefined
}

/** A value the schema accepts (mostly: patterns and unknown fields are approximated). */
export function fromSchema(schema: Schema, key?: string, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 })
  const hint = hinted(key, schema)
  if (hint) return hint
  return plain(schema, key, depth)
}

function plain(schema: Schema, key?: string, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return fc.jsonValue({ maxDepth: 2 })
  if (schema.const !== undefined) return fc.constant(schema.const)
  if (Array.isArray(schema.anyOf)) return fc.oneof(...schema.anyOf.map((s: Schema) => fromSchema(s, key, depth + 1)))
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
  switch (schema.type) {
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {}
      const required = new Set<string>(schema.required ?? [])
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [name, sub] of Object.entries(properties)) record[name] = fromSchema(sub, name, depth + 1)
      const requiredKeys = Object.keys(properties).filter((k) => required.has(k))
      if (Object.keys(properties).length === 0 && schema.patternProperties) {
        return fc.dictionary(
          fc.string({ maxLength: 20 }),
          fromSchema(Object.values(schema.patternProperties)[0] as Schema, undefined, depth + 1),
          { maxKeys: 5 },
        )
      }
      return fc.record(record, { requiredKeys })
    }
    case 'array':
      return fc.array(fromSchema(schema.items, key, depth + 1), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 5, 5),
      })
    case 'string': {
      if (schema.format === 'integer') return fc.integer({ min: -5, max: 1_000_000 }).map(String)
      if (schema.pattern) {
        try {
          return fc.stringMatching(new RegExp(schema.pattern), { size: 'small' })
        } catch {}
      }
      const min = schema.minLength ?? 0
      const max = Math.max(min, Math.min(schema.maxLength ?? 40, 80))
      return fc.oneof(
        fc.string({ minLength: min, maxLength: max }),
        fc.string({ unit: 'binary', minLength: min, maxLength: max }),
      )
    }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -10, max: schema.maximum ?? 1_000_000 })
    case 'number':
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true })
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
  }
  return fc.jsonValue({ maxDepth: 2 })
}

/** Every node of a JSON value, as paths. */
function paths(
  value: unknown,
  prefix: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(prefix)
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) paths(v, [...prefix, Array.isArray(value) ? Number(k) : k], out)
  }
  return out
}

function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement
  const copy: any = Array.isArray(value) ? [...value] : { ...(value as object) }
  copy[path[0]] = replaceAt(copy[path[0]], path.slice(1), replacement)
  return copy
}

/** The valid-shaped value with one node (the whole value included) replaced by a nasty one. */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, fc.nat(), nastyValue).map(([value, pick, nasty]) => {
    const all = paths(value)
    return replaceAt(value, all[pick % all.length], nasty)
  })
}

/** Text-level changes JSON.stringify cannot make: prototype and duplicate keys, lone surrogate escapes, deep nesting. */
const textEdits = fc.oneof(
  { weight: 12, arbitrary: fc.constant((json: string) => json) },
  fc.constant((json: string) => json.replace(/^\{/, '{"__proto__":{"polluted":1,"isAdmin":true},')),
  fc.constant((json: string) => json.replace(/^\{/, '{"constructor":{"prototype":{"polluted":1}},')),
  fc.constant((json: string) => json.replace(/^\{/, '{"":1,')),
  fc.constant((json: string) => json.replace(/^\[\{/, '[{"__proto__":{"polluted":1},')),
  // Duplicate keys: the first key again, before (original wins) and after (duplicate wins).
  fc.constant((json: string) => {
    const m = /^\{("(?:[^"\\]|\\.)*"):/.exec(json)
    return m ? `{${m[1]}:{"x":[1,2]},${json.slice(1)}` : json
  }),
  fc.constant((json: string) => {
    const m = /^\{("(?:[^"\\]|\\.)*"):/.exec(json)
    return m && json.length > 2 ? `${json.slice(0, -1)},${m[1]}:"\\ud800"}` : json
  }),
  // A string value's content swapped for escapes of lone surrogates and NUL.
  fc.constant((json: string) => json.replace(/"((?:[^"\\]|\\.)*)"(?=[,}\]])/, '"\\ud800\\u0000\\udc00"')),
  fc.constant((json: string) => json.replace(/:(-?\d+)/, ':1e400')),
  fc.constant((json: string) => json.replace(/:(-?\d+)/, ':-0.0e-400')),
  fc.constant((json: string) => json.replace(/:(-?\d+)/, ':123456789012345678901234567890123')),
  fc.constant((json: string) => json.slice(0, Math.max(0, json.length - 1))),
  fc.constant((json: string) => `\ufeff${json}`),
  fc.constant((json: string) => `${json} ${json}`),
  deepJson.map((deep) => (json: string) => (json.startsWith('{') ? json.replace(/^\{/, `{"deep":${deep},`) : deep)),
)

/** Byte-level changes: invalid UTF-8 sequences and raw NUL bytes inside the text. */
const byteEdits = fc.oneof(
  { weight: 6, arbitrary: fc.constant((bytes: Uint8Array) => bytes) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.nat(),
        fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf0, 0x28, 0x8c], [0x00], [0xe2, 0x82]),
      )
      .map(([at, seq]) => (bytes: Uint8Array) => {
        const i = bytes.length ? at % bytes.length : 0
        return Uint8Array.from([...bytes.subarray(0, i), ...seq, ...bytes.subarray(i)])
      }),
  },
)

/** The bytes of a request body: the value as JSON (or raw text), edited as text and as bytes. */
export function bodyBytes(value: fc.Arbitrary<unknown>): fc.Arbitrary<Uint8Array> {
  return fc.tuple(value, textEdits, byteEdits).map(([v, edit, bytes]) => {
    const json = v === undefined ? '' : JSON.stringify(v)
    return bytes(encoder.encode(edit(json ?? '')))
  })
}

/**
 * Malformed percent-encodings: a lone `%`, bad hex, truncated and overlong UTF-8, an encoded surrogate, `%u`, and
 * generated runs of `%XX` cut short. decodeURIComponent throws on each of them.
 */
export const badPercent: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('%', '%%', 'a%', '%z', '%zz', '%E0%A4%A', '%E0%A4', '%C0%AF', '%ED%A0%80', '%FF', '%uD800', '%%41'),
  fc
    .tuple(
      fc.array(fc.constantFrom('%E0', '%A4', '%C3', '%28', '%F0', '%9F', '%80', '%41', '=', ';', 'x'), {
        maxLength: 5,
      }),
      fc.constantFrom('%', '%E', '%A', '%G1', ''),
    )
    .map(([parts, tail]) => `${parts.join('')}${tail}`),
)

/** A Cookie header: the elevation cookie and others, well-formed and not (bad escapes, no `=`, quotes, repeats). */
export const cookieHeader: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      latin1.map((v) => `__Secure-recent_mfa=${v}`),
      badPercent.map((v) => `__Secure-recent_mfa=${v}`),
      badPercent.map((v) => `__Secure-recent_mfa="${v}"`),
      fc
        .tuple(fc.oneof(badPercent, fc.constantFrom('a', '__proto__', 'constructor', '')), badPercent)
        .map(([k, v]) => `${k}=${v}`),
      fc.constantFrom('__proto__=1', 'constructor=2', '=', ';', 'novalue', '__Secure-recent_mfa', '"%"'),
    ),
    { minLength: 1, maxLength: 4 },
  )
  .map((parts) => parts.join('; '))

/** A query string from a query schema: its keys with good and bad values, unknown keys, repeats, bad escapes. */
export function queryString(schema: Schema): fc.Arbitrary<string> {
  const keys = Object.keys(schema?.properties ?? {})
  const key = fc.oneof(
    { weight: 5, arbitrary: keys.length ? fc.constantFrom(...keys) : fc.constant('limit') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '__proto__',
        '__proto__[polluted]',
        'constructor[prototype][polluted]',
        'a[b]',
        '',
        'limit[]',
        'with_guild_experiments',
        'platform',
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  )
  const value = fc.oneof(
    fc.integer({ min: -5, max: 2000 }).map(String),
    snowflakeLike,
    fc.constantFrom(
      'true',
      'false',
      '1',
      '0',
      '',
      'null',
      'DEVELOPER_PORTAL',
      '1e3',
      '0x10',
      ' 5',
      '5 ',
      '+5',
      '5.5',
      '-0',
    ),
    anyString,
  )
  const raw = fc.oneof(
    fc.constantFrom('%', '%zz', '%ff', '%c3%28', '%00', '%ed%a0%80', '&&', '=', '==', '+'),
    badPercent,
  )
  const pair = fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(key, value).map(([k, v]) => `${encodeURIComponentLoose(k)}=${encodeURIComponentLoose(v)}`),
    },
    { weight: 1, arbitrary: fc.tuple(key, raw).map(([k, r]) => `${encodeURIComponentLoose(k)}=${r}`) },
    { weight: 1, arbitrary: fc.tuple(badPercent, fc.oneof(value, raw)).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: key.map((k) => encodeURIComponentLoose(k)) },
  )
  return fc.array(pair, { maxLength: 6 }).map((pairs) => (pairs.length ? `?${pairs.join('&')}` : ''))
}

/** encodeURIComponent that does not throw on lone surrogates (they go as %ED%A0%80, i.e. invalid UTF-8). */
export function encodeURIComponentLoose(text: string): string {
  let out = ''
  for (const ch of text) {
    const code = ch.codePointAt(0)!
    if (code >= 0xd800 && code <= 0xdfff)
      out += `%ED%${(0xa0 | ((code >> 6) & 0x1f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`
    else out += encodeURIComponent(ch)
  }
  return out
}

/** A path parameter: one of the fixture's real IDs most of the time, else something odd. */
export function pathParam(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: real.length ? fc.constantFrom(...real) : fc.constant('1') },
    { weight: 2, arbitrary: snowflakeLike },
    {
      weight: 2,
      arbitrary: fc.oneof(
        anyString.map(encodeURIComponentLoose),
        fc.constantFrom(
          '@me',
          '%40me',
          '0',
          '-1',
          '%00',
          '%ff',
          '%2e%2e',
          '..%2f..%2f',
          '%252e',
          'a%2Fb',
          '1.5',
          '1e3',
          ' 1',
          '%20',
        ),
        // Bun itself answers a bare 431 past 16 KiB of request line and headers (see the report): stay below.
        fc.constantFrom(100, 3_000).map((n) => '9'.repeat(n)),
      ),
    },
  )
}

/** Extra request headers, valid and odd (values stay ISO-8859-1 so fetch can send them). */
export const extraHeaders: fc.Arbitrary<Record<string, string>> = fc
  .array(
    fc.oneof(
      fc.tuple(
        fc.constant('x-fingerprint'),
        fc.oneof(fc.constant('1.abc'), fc.stringMatching(/^[0-9]{1,20}\.[A-Za-z0-9_-]{0,43}$/), latin1, badPercent),
      ),
      fc.tuple(
        fc.constant('x-forwarded-for'),
        fc.oneof(fc.ipV4(), fc.ipV6(), latin1, fc.constant('1.2.3.4, 5.6.7.8'), fc.constant(''), badPercent),
      ),
      fc.tuple(
        fc.constantFrom('x-service-mfa-authorization', 'x-discord-mfa-authorization'),
        fc.oneof(latin1, fc.constant('eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.'), badPercent),
      ),
      fc.tuple(fc.constant('cookie'), cookieHeader),
      fc.tuple(fc.constant('x-super-properties'), fc.oneof(latin1, badPercent)),
      fc.tuple(fc.constantFrom('x-request-id', 'x-audit-log-reason'), badPercent),
      fc.tuple(fc.constant('user-agent'), fc.oneof(latin1, fc.constant('A'.repeat(4000)))),
      fc.tuple(fc.constant('accept-language'), latin1),
      fc.tuple(fc.constant('origin'), fc.oneof(fc.webUrl(), latin1)),
      fc.tuple(fc.constant('x-audit-log-reason'), latin1),
    ),
    { maxLength: 3 },
  )
  .map((pairs) => Object.fromEntries(pairs))

export const contentType = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'multipart/form-data',
      'text/plain',
      'application/octet-stream',
      '',
      'application/json; charset=latin1',
      '*/*',
      'application/json, text/plain',
    ),
  },
)
