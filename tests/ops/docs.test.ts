// The API docs: request bodies under the content types the server reads, security schemes per route (the Authorize
// button), tags, an example body the server accepts, and a Gateway page naming every opcode, close code and dispatch.
import { beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { Close } from '../../src/gateway/protocol'
import { VoiceDispatch } from '../../src/voice/protocol'
import { makeApp, server } from '../helpers'

type Op = {
  tags?: string[]
  security?: Record<string, string[]>[]
  requestBody?: { content: Record<string, { schema: any }> }
}
let doc: {
  tags: { name: string; description: string }[]
  paths: Record<string, Record<string, Op>>
  components: { securitySchemes: Record<string, any> }
}
const ops: [path: string, method: string, op: Op][] = []

beforeAll(async () => {
  const { url } = await server()
  doc = (await (await fetch(`${url}/api/docs/json`)).json()) as typeof doc
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) ops.push([path, method, op])
})

/** What Swagger UI's "Try it out" fills in: a property's first example, else a value of its type. */
function sample(schema: any): unknown {
  if (schema.examples?.length) return schema.examples[0]
  if (schema.example !== undefined) return schema.example
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf) return sample(schema.anyOf[0])
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, sample(v)]))
    case 'array':
      return [sample(schema.items ?? {})]
    case 'integer':
    case 'number':
      return schema.minimum ?? 0
    case 'boolean':
      return true
    default:
      return 'string'
  }
}

describe('OpenAPI document', () => {
  test('documents the /api/v9 routes once, many of them', () => {
    expect(ops.length).toBeGreaterThan(80)
    expect(ops.every(([path]) => path.startsWith('/api/v9/'))).toBe(true)
  })

  test('every request body has a schema, under JSON (forms only on the token endpoints, multipart only on messages)', () => {
    const withBody = ops.filter(([, , op]) => op.requestBody)
    expect(withBody.length).toBeGreaterThan(40)
    for (const [path, method, op] of withBody) {
      const types = Object.keys(op.requestBody!.content)
      expect(types, `${method} ${path}`).toContain(
        path.startsWith('/api/v9/oauth2/token') ? 'application/x-www-form-urlencoded' : 'application/json',
      )
      for (const type of types)
        expect(['object', 'array'], `${method} ${path} ${type}`).toContain(
          [op.requestBody!.content[type].schema?.type].flat()[0],
        )
      if (types.includes('application/x-www-form-urlencoded')) expect(path).toStartWith('/api/v9/oauth2/token')
      if (types.includes('multipart/form-data')) {
        expect(path).toEndWith('/messages')
        expect(op.requestBody!.content['multipart/form-data'].schema.properties.payload_json.type).toBe('string')
      }
    }
    // The two routes that read their bodies by hand are documented too.
    expect(
      Object.keys(doc.paths['/api/v9/auth/login'].post.requestBody!.content['application/json'].schema.properties),
    ).toEqual(expect.arrayContaining(['login', 'password']))
    expect(Object.keys(doc.paths['/api/v9/lobbies/{lobbyId}/messages'].post.requestBody!.content)).toEqual([
      'application/json',
      'multipart/form-data',
    ])
    expect(
      doc.paths['/api/v9/oauth2/token'].post.requestBody!.content['application/x-www-form-urlencoded'].schema.properties
        .grant_type.enum,
    ).toEqual(['authorization_code', 'refresh_token', 'client_credentials'])
  })

  test('security schemes for the user token, Bot and Bearer; each authenticated route names the ones it takes', () => {
    const schemes = doc.components.securitySchemes
    expect(schemes.UserToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    expect(schemes.BotToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'Authorization' })
    expect(schemes.OAuth2Bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(doc.paths['/api/v9/users/@me'].get.security).toEqual([
      { UserToken: [] },
      { BotToken: [] },
      { OAuth2Bearer: ['identify'] },
    ])
    expect(doc.paths['/api/v9/lobbies'].post.security).toEqual([{ BotToken: [] }])
    expect(doc.paths['/api/v9/auth/register'].post.security).toBeUndefined()
    const named = new Set(ops.flatMap(([, , op]) => (op.security ?? []).flatMap((s) => Object.keys(s))))
    for (const name of named) expect(Object.keys(schemes)).toContain(name)
    expect(ops.filter(([, , op]) => op.security).length).toBeGreaterThan(50)
  })

  test('every operation has a tag that is declared with a description', () => {
    const declared = new Map(doc.tags.map((t) => [t.name, t.description]))
    for (const [path, method, op] of ops) {
      expect(op.tags?.length, `${method} ${path}`).toBeGreaterThan(0)
      for (const tag of op.tags!) expect(declared.get(tag), tag).toBeTruthy()
    }
  })

  test('the example Swagger UI offers for POST /lobbies is accepted (idle_timeout_seconds is a number)', async () => {
    const app = await makeApp()
    const example = sample(doc.paths['/api/v9/lobbies'].post.requestBody!.content['application/json'].schema) as Record<
      string,
      unknown
    >
    expect(typeof example.idle_timeout_seconds).toBe('number')
    const { url } = await server()
    const r = await fetch(`${url}/api/v9/lobbies`, {
      method: 'POST',
      headers: { authorization: `Bot ${app.bot_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(example),
    })
    expect(r.status).toBe(201)
  })

  test('the Swagger UI page and its assets are served', async () => {
    const { url } = await server()
    const page = await fetch(`${url}/api/docs`)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('/api/docs/json')
    expect((await fetch(`${url}/api/docs/swagger-ui-bundle.js`)).status).toBe(200)
  })
})

describe('Gateway page', () => {
  let html = ''
  beforeAll(async () => {
    const { url } = await server()
    const r = await fetch(`${url}/api/docs/gateway`)
    expect(r.status).toBe(200)
    html = await r.text()
  })

  test('names every close code of the protocol', () => {
    for (const code of Object.values(Close)) expect(html).toContain(`<td>${code}</td>`)
  })

  test('names every dispatch event the source publishes', () => {
    const sources: string[] = []
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (statSync(path).isDirectory()) {
          if (name !== 'pages') walk(path)
        } else if (name.endsWith('.ts')) sources.push(readFileSync(path, 'utf8'))
      }
    }
    walk(join(import.meta.dir, '../../src'))
    const published = new Set<string>(Object.values(VoiceDispatch))
    for (const text of sources) {
      for (const m of text.matchAll(/(?:publish|toLobby|toUser|sendDirect)\([^;]*?'([A-Z][A-Z_]{3,})'/g))
        published.add(m[1])
    }
    expect(published.size).toBeGreaterThan(25)
    for (const type of published) expect(html, type).toContain(`<td>${type}</td>`)
  })
})
