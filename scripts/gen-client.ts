// Writes client/src/api.gen.ts, the SDK's types of every route, from the server's own OpenAPI document (built from the
// routes' declarations, src/http/docs.ts): each path template and method → its body, query and answer types. The
// server is started in this process on a temporary database, asked for /api/docs/json, and stopped.
// `bun run gen:client` writes the file; `--check` exits 1 when the file on disk is not what it would write
// (tests/client/gen.test.ts runs that, so CI fails on a stale file).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const GENERATED = join(import.meta.dir, '../client/src/api.gen.ts')

type Schema = {
  type?: string | string[]
  description?: string
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  enum?: unknown[]
  const?: unknown
  patternProperties?: Record<string, Schema>
  additionalProperties?: boolean | Schema
  nullable?: boolean
}
type Operation = {
  summary?: string
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema; description?: string }[]
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> }
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>
}
type Document = { paths: Record<string, Record<string, Operation>> }

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const
const IDENT = /^[A-Za-z_$][\w$]*$/

/** The document of a server started here (what GET /api/docs/json answers). */
export async function serverDocument(): Promise<Document> {
  process.env.LOG_LEVEL ??= 'error'
  const { startServer } = await import('../src/server')
  const dir = mkdtempSync(join(tmpdir(), 'gen-client-'))
  const running = await startServer({ port: 0, host: '127.0.0.1', databasePath: join(dir, 'gen.sqlite') })
  try {
    const response = await fetch(`${running.url}/api/docs/json`)
    if (!response.ok) throw new Error(`GET /api/docs/json answered ${response.status}`)
    return (await response.json()) as Document
  } finally {
    await running.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The TypeScript of the document: named object types, then the Api interface of every route. */
export function generate(document: Document): string {
  const named = new Map<string, string>() // body → name
  const bodies = new Map<string, string>() // name → body
  const docs = new Map<string, string>() // name → description

  /** A readable name from a short title-like description ("Lobby member" → LobbyMember), else none. */
  const nameOf = (description: string | undefined): string | undefined => {
    if (!description || description === 'Error') return undefined
    const words = description.replace(/^(A|An|The) /, '').split(' ')
    if (words.length > 3 || !words.every((w) => /^[A-Za-z]+$/.test(w))) return undefined
    if (!/^[A-Z]/.test(description)) return undefined
    return words.map((w) => w[0].toUpperCase() + w.slice(1)).join('')
  }

  const literal = (value: unknown) => JSON.stringify(value)
  const comment = (text: string | undefined, indent: string) =>
    text ? `${indent}/** ${text.replace(/\*\//g, '*\\/').replace(/\s+/g, ' ')} */\n` : ''

  const ts = (schema: Schema | undefined, indent = ''): string => {
    if (!schema || typeof schema !== 'object') return 'unknown'
    if ('const' in schema) return literal(schema.const)
    if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map(literal))].join(' | ')
    const union = schema.anyOf ?? schema.oneOf
    if (union?.length) {
      // Flattened, so that nested unions of scalars do not repeat a member (string | string | number).
      const parts = [
        ...new Set(union.flatMap((s) => ts(s, indent)).flatMap((p) => (/[{(]/.test(p) ? [p] : p.split(' | ')))),
      ]
      return parts.length === 1 ? parts[0] : parts.map((p) => (p.includes('=>') ? `(${p})` : p)).join(' | ')
    }
    if (schema.allOf?.length) return schema.allOf.map((s) => ts(s, indent)).join(' & ')
    const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
    if (types.length > 1) {
      const parts = types.map((type) => ts({ ...schema, type }, indent))
      return [...new Set(parts)].join(' | ')
    }
    const type = types[0]
    const nullable = schema.nullable ? ' | null' : ''
    switch (type) {
      case 'string':
        return `string${nullable}`
      case 'integer':
      case 'number':
        return `number${nullable}`
      case 'boolean':
        return `boolean${nullable}`
      case 'null':
        return 'null'
      case 'array': {
        const item = ts(schema.items, indent)
        return `${/[|&]/.test(item) ? `(${item})` : item}[]${nullable}`
      }
      case 'object':
        return objectType(schema, indent) + nullable
      default:
        return schema.properties ? objectType(schema, indent) : 'unknown'
    }
  }

  const objectBody = (schema: Schema, indent: string): string => {
    const inner = `${indent}  `
    const props = Object.entries(schema.properties ?? {})
    const required = new Set(schema.required ?? [])
    const extra = schema.patternProperties
      ? Object.values(schema.patternProperties)
      : typeof schema.additionalProperties === 'object'
        ? [schema.additionalProperties]
        : []
    let body: string
    if (!props.length && extra.length)
      body = `Record<string, ${[...new Set(extra.map((s) => ts(s, indent)))].join(' | ')}>`
    else if (!props.length) body = 'Record<string, unknown>'
    else {
      const lines = props.map(([key, value]) => {
        const type = ts(value, inner)
        // A named type's description is on the type already.
        const note = docs.get(type) === value.description ? undefined : value.description
        return `${comment(note, inner)}${inner}${IDENT.test(key) ? key : literal(key)}${required.has(key) ? '' : '?'}: ${type}`
      })
      body = `{\n${lines.join('\n')}\n${indent}}`
    }
    return body
  }

  const objectType = (schema: Schema, indent: string): string => {
    const name = nameOf(schema.description)
    if (!name) return objectBody(schema, indent)
    // Named types are written at the top level, without the indentation.
    const flat = objectBody(schema, '')
    const known = named.get(flat)
    if (known) return known
    let unique = name
    for (let i = 2; bodies.has(unique); i++) unique = `${name}${i}`
    named.set(flat, unique)
    bodies.set(unique, flat)
    docs.set(unique, schema.description!)
    return unique
  }

  const routes: string[] = []
  const templates: string[] = []
  for (const [fullPath, operations] of Object.entries(document.paths)) {
    const path = fullPath.replace(/^\/api\/v9/, '')
    const methods: string[] = []
    for (const method of METHODS) {
      const op = operations[method]
      if (!op) continue
      const jsonBody = op.requestBody?.content?.['application/json'] ?? Object.values(op.requestBody?.content ?? {})[0]
      const body = op.requestBody ? ts(jsonBody?.schema, '      ') : 'undefined'
      const query = (op.parameters ?? []).filter((p) => p.in === 'query')
      const queryType = query.length
        ? `{\n${query
            .map(
              (p) =>
                `${comment(p.description ?? p.schema?.description, '        ')}        ${IDENT.test(p.name) ? p.name : literal(p.name)}?: ${queryValue(p.schema)}`,
            )
            .join('\n')}\n      }`
        : '{}'
      const answers = Object.entries(op.responses ?? {}).filter(([status]) => /^2/.test(status))
      const responseTypes = [
        ...new Set(
          answers.map(([, answer]) => {
            const schema = answer.content?.['application/json']?.schema
            return schema ? ts(schema, '      ') : 'undefined'
          }),
        ),
      ]
      methods.push(
        `${comment(op.summary, '    ')}    ${method}: {\n      body: ${body}\n      query: ${queryType}\n      response: ${responseTypes.join(' | ') || 'unknown'}\n    }`,
      )
    }
    routes.push(`  ${literal(path)}: {\n${methods.join('\n')}\n  }`)
    templates.push(path)
  }
  // Most specific first: at the first segment where two templates differ, a literal sorts before a parameter.
  const rank = (p: string) => p.split('/').map((seg) => (seg.startsWith('{') ? '\uffff' : seg))
  const compare = (a: string[], b: string[]) => {
    for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1
    return a.length - b.length
  }
  const order = [...templates].sort((a, b) => compare(rank(a), rank(b)))
  const named_ = [...bodies].map(([name, body]) => `${comment(docs.get(name), '')}export type ${name} = ${body}\n`)
  return `// Generated by scripts/gen-client.ts from the server's OpenAPI document (/api/docs/json): do not edit.
// \`bun run gen:client\` writes it again; tests/client/gen.test.ts fails when it is out of date.
/* eslint-disable */

${named_.join('\n')}
/** Every route: path template (under /api/v10) → method → body, query and answer. */
export interface Api {
${routes.join('\n')}
}

/** The templates, most specific first (a literal segment before a parameter), for matching a concrete path. */
export type RouteOrder = [
${order.map((p) => `  ${literal(p)},`).join('\n')}
]
`
}

function queryValue(schema: Schema | undefined): string {
  const types = Array.isArray(schema?.type) ? schema.type : [schema?.type]
  if (types.includes('boolean')) return 'boolean | string'
  return 'string | number'
}

if (import.meta.main) {
  const text = generate(await serverDocument())
  if (process.argv.includes('--check')) {
    let current = ''
    try {
      current = readFileSync(GENERATED, 'utf8')
    } catch {}
    if (current !== text) {
      console.error('client/src/api.gen.ts is out of date: run `bun run gen:client`')
      process.exit(1)
    }
    console.log('client/src/api.gen.ts is up to date')
  } else {
    writeFileSync(GENERATED, text)
    console.log(`wrote client/src/api.gen.ts (${text.length} characters)`)
  }
  process.exit(0)
}
