// The OpenAPI document at /api/docs/json describes what every route answers (issues 11 and 18): a client reading
// /api/docs sees each operation's success body (or that it has none) and Discord's error body. Real answers against
// these schemas: docs-answers.test.ts.
import { describe, expect, test } from 'bun:test'
import type { TSchema } from 'elysia'
import * as lobbies from '../../src/lobbies/schemas'
import { server } from '../helpers'

type Operation = {
  summary?: string
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>
  requestBody?: unknown
}

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

  test('the lobby bodies the docs show have the fields and required fields of the schemas the routes check', () => {
    // The routes' schemas take any value where FormCheck judges it; the docs show the wire's types (lobbies/schemas.ts).
    type Shape = TSchema & { properties?: Record<string, unknown>; required?: string[]; items?: Shape; anyOf?: Shape[] }
    const object = (schema: Shape): Shape =>
      schema.items ? object(schema.items) : (schema.anyOf?.find((s) => s.properties) ?? schema)
    const fields = (schema: Shape) => ({
      fields: Object.keys(object(schema).properties ?? {}).sort(),
      required: [...(object(schema).required ?? [])].sort(),
    })
    const pairs: [Shape, Shape][] = [
      [lobbies.CreateLobbyDoc, lobbies.CreateLobbySchema],
      [lobbies.PutLobbyDoc, lobbies.PutLobbySchema],
      [lobbies.PatchLobbyDoc, lobbies.PatchLobbySchema],
      [lobbies.BulkDoc, lobbies.BulkSchema],
      [lobbies.MessageDoc, lobbies.MessageSchema],
      [lobbies.LinkDoc, lobbies.LinkSchema],
    ]
    for (const [documented, checked] of pairs) expect(fields(documented)).toEqual(fields(checked))
    expect(fields(lobbies.CreateLobbyDoc.properties.members.items)).toEqual(fields(lobbies.MemberSchema))
  })
})
