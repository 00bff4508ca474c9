// The OpenAPI document at /api/docs/json describes what every route answers (issues 11 and 18): a client reading
// /api/docs sees each operation's success body (or that it has none) and Discord's error body. Real answers against
// these schemas: docs-answers.test.ts.
import { describe, expect, test } from 'bun:test'
import type { TSchema } from 'elysia'
import * as limits from '../../src/lobbies/limits'
import { modules } from '../../src/modules'
import { api, server } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

type Operation = {
  summary?: string
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>
  requestBody?: { content?: Record<string, { schema?: unknown }> }
  parameters?: { name: string; in: string }[]
}

type Shape = TSchema & { properties?: Record<string, unknown>; required?: string[]; items?: Shape; anyOf?: Shape[] }
/** The object a body schema describes: itself, its list's items, or the object of a union (nullable bodies). */
const object = (schema: Shape): Shape =>
  schema.items ? object(schema.items) : (schema.anyOf?.find((s) => s.properties) ?? schema)
const fieldNames = (schema: Shape) => Object.keys(object(schema).properties ?? {}).sort()
/** Whether the document shows the fields a declared schema has (of its object, its items, its union's object). */
const sameFields = (declared: Shape, shown: Shape) =>
  JSON.stringify(fieldNames(declared)) === JSON.stringify(fieldNames(shown))

async function openapi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const { url } = await server()
  const response = await fetch(`${url}/api/docs/json`)
  expect(response.status).toBe(200)
  return (await response.json()) as { paths: Record<string, Record<string, Operation>> }
}

describe('GET /api/docs/json', () => {
  test('every operation documents a success answer and the error body', async () => {
    const { paths } = await openapi()
    const operations = Object.entries(paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, op })),
    )
    expect(operations.length).toBeGreaterThan(60)
    const undocumented = operations
      .filter(({ op }) => !Object.keys(op.responses ?? {}).some((status) => status.startsWith('2')))
      .map(({ at }) => at)
    expect(undocumented).toEqual([])
    const withoutErrors = operations.filter(({ op }) => !op.responses?.['4XX']?.content).map(({ at }) => at)
    expect(withoutErrors).toEqual([])
  })

  test("no answer says an integer may come as a string (Elysia's t.Integer, right for input only)", async () => {
    const { paths } = await openapi()
    const stringIntegers: string[] = []
    const walk = (schema: unknown, at: string) => {
      if (!schema || typeof schema !== 'object') return
      const s = schema as Record<string, unknown>
      if (s.type === 'string' && s.format === 'integer') stringIntegers.push(at)
      for (const [key, value] of Object.entries(s)) walk(value, `${at}.${key}`)
    }
    for (const [path, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, answer] of Object.entries(op.responses ?? {}))
          walk(answer.content?.['application/json']?.schema, `${method} ${path} ${status}`)
      }
    }
    expect(stringIntegers).toEqual([])
  })

  test('answers with a body carry its schema; bodies a handler checks itself are documented too', async () => {
    const { paths } = await openapi()
    const me = paths['/api/v9/users/@me'].get.responses!['200']
    expect(me.content!['application/json'].schema).toMatchObject({
      properties: { id: {}, username: {}, mfa_enabled: {} },
    })
    expect(paths['/api/v9/guilds/{guildId}'].delete.responses!['204'].content).toBeUndefined()
    // POST /auth/login checks its body in the handler (a logged-in client gets its session whatever the body).
    expect(paths['/api/v9/auth/login'].post.requestBody).toMatchObject({
      content: { 'application/json': { schema: { properties: { login: {}, password: {} } } } },
    })
    // The token endpoint answers RFC 6749's error body, not Discord's.
    expect(paths['/api/v9/oauth2/token'].post.responses!['4XX'].content!['application/json'].schema).toMatchObject({
      properties: { error: {}, error_description: {} },
    })
  })

  test('every declared endpoint documents its body, its query and each answer it declares', async () => {
    const { paths } = await openapi()
    const endpoints = modules.flatMap((m) => m.endpoints ?? [])
    expect(endpoints.length).toBeGreaterThan(50)
    const missing: string[] = []
    for (const { method, path, spec } of endpoints) {
      const at = `${method} ${path}`
      const op = paths[`/api/v9${path.replace(/:(\w+)/g, '{$1}')}`]?.[method.toLowerCase()]
      if (!op) {
        missing.push(`${at}: no operation`)
        continue
      }
      for (const [status, answer] of Object.entries(spec.answers)) {
        const documented = op.responses?.[status]
        // A schema is a JSON body, shown with the declared schema's fields; a description (204) has no body.
        if (typeof answer === 'string') {
          if (!documented || documented.content) missing.push(`${at}: answer ${status}`)
          continue
        }
        const shown = documented?.content?.['application/json']?.schema as Shape | undefined
        if (!shown) missing.push(`${at}: answer ${status}`)
        else if (!sameFields(answer as Shape, shown)) missing.push(`${at}: answer ${status} fields`)
      }
      const body = (spec.body ?? spec.handlerBody) as Shape | undefined
      const media = Object.entries(op.requestBody?.content ?? {})
      if (body && !media.length) missing.push(`${at}: body`)
      // Each content type the server reads has a schema; the JSON one (and the form, where read) the declared fields.
      for (const [type, { schema }] of media)
        if (!schema || (type !== 'multipart/form-data' && body && !sameFields(body, schema as Shape)))
          missing.push(`${at}: body as ${type}`)
      for (const name of Object.keys((spec.query ?? spec.handlerQuery)?.properties ?? {}))
        if (!op.parameters?.some((p) => p.in === 'query' && p.name === name)) missing.push(`${at}: query ${name}`)
    }
    expect(missing).toEqual([])
  })

  test('the lobby bodies the docs show carry the limits the routes check (one schema for both)', async () => {
    const { paths } = await openapi()
    const body = (path: string, method: string) =>
      (paths[`/api/v9${path}`][method].requestBody as any).content['application/json'].schema
    const metadata = {
      type: ['object', 'null'],
      maxProperties: limits.MAX_METADATA_KEYS,
      propertyNames: { maxLength: limits.MAX_METADATA_CHARS },
      additionalProperties: { type: 'string', maxLength: limits.MAX_METADATA_CHARS },
    }
    const idle = { type: ['integer', 'null'], minimum: limits.IDLE_TIMEOUT_MIN, maximum: limits.IDLE_TIMEOUT_MAX }
    const member = { properties: { metadata, flags: { type: ['integer', 'null'], maximum: limits.MEMBER_FLAGS_ALL } } }
    const lobby = {
      properties: {
        metadata,
        members: { maxItems: limits.MAX_MEMBERS_PER_REQUEST, items: member },
        idle_timeout_seconds: idle,
        flags: { type: ['integer', 'null'], minimum: 0, maximum: limits.LOBBY_FLAGS_ALL },
        override_event_webhooks_url: { type: ['string', 'null'], maxLength: limits.MAX_WEBHOOK_URL_CHARS },
      },
    }
    expect(body('/lobbies', 'post')).toMatchObject(lobby)
    expect(body('/lobbies/{lobbyId}', 'patch')).toMatchObject(lobby)
    expect(body('/lobbies', 'put')).toMatchObject({
      properties: {
        secret: { minLength: 1, maxLength: limits.MAX_SECRET_CHARS },
        lobby_metadata: metadata,
        member_metadata: metadata,
        idle_timeout_seconds: idle,
      },
    })
    expect(body('/lobbies/{lobbyId}/members/{userId}', 'put')).toMatchObject({ type: ['object', 'null'], ...member })
    expect(body('/lobbies/{lobbyId}/members/bulk', 'post')).toMatchObject({
      maxItems: limits.MAX_MEMBERS_PER_REQUEST,
      items: { properties: { ...member.properties, remove_member: { type: ['boolean', 'null'] } } },
    })
    expect(body('/lobbies/{lobbyId}/messages', 'post')).toMatchObject({
      properties: { content: { maxLength: limits.MAX_CONTENT_CHARS }, metadata },
    })
    expect(body('/lobbies/{lobbyId}/messages/{messageId}/moderation-metadata', 'put')).toMatchObject({
      type: ['object', 'null'],
      maxProperties: limits.MODERATION_METADATA_KEYS,
      propertyNames: { maxLength: limits.MODERATION_METADATA_KEY_CHARS },
      additionalProperties: { type: 'string', maxLength: limits.MODERATION_METADATA_VALUE_CHARS },
    })
    expect(body('/lobbies/{lobbyId}/channel-linking', 'patch')).toMatchObject({
      properties: { channel_id: { type: ['string', 'null'], pattern: '^[0-9]{1,20}$' } },
    })
  })

  test('building the document leaves the schemas that check bodies as they are (their errors still name the field)', async () => {
    await openapi()
    const { bot } = await setup(0)
    const lobby = await createLobby(bot)
    // A hot route's body check and a body the handler checks (login): both read their schema again on a failure.
    const message = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: bot,
      body: { content: 'x', flags: -1 },
    })
    expect([message.status, message.body.errors]).toEqual([
      400,
      { flags: { _errors: [{ code: 'NUMBER_TYPE_MIN', message: 'int value should be greater than or equal to 0.' }] } },
    ])
    const login = await api('POST', '/auth/login', {
      body: { login: 'a@b.c', password: 'p'.repeat(8), login_source: 'x' },
    })
    expect([login.status, Object.keys(login.body.errors)]).toEqual([400, ['login_source']])
  })
})
