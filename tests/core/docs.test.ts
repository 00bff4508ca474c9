// The OpenAPI document at /api/docs/json describes what every route answers (issue 11): a client reading
// /api/docs sees each operation's success body (or that it has none) and Discord's error body.
import { describe, expect, test } from 'bun:test'
import { server } from '../helpers'

type Operation = { summary?: string; responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>; requestBody?: unknown }

async function openapi(): Promise<{ paths: Record<string, Record<string, Operation>> }> {
  const { url } = await server()
  const response = await fetch(`${url}/api/docs/json`)
  expect(response.status).toBe(200)
  return (await response.json()) as { paths: Record<string, Record<string, Operation>> }
}

describe('GET /api/docs/json', () => {
  test('every operation documents a success answer and the error body', async () => {
    const { paths } = await openapi()
    const operations = Object.entries(paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ at: `${method.toUpperCase()} ${path}`, op })))
    expect(operations.length).toBeGreaterThan(60)
    const undocumented = operations.filter(({ op }) => !Object.keys(op.responses ?? {}).some((status) => status.startsWith('2'))).map(({ at }) => at)
    expect(undocumented).toEqual([])
    const withoutErrors = operations.filter(({ op }) => !op.responses?.['4XX']?.content).map(({ at }) => at)
    expect(withoutErrors).toEqual([])
  })

  test('answers with a body carry its schema; bodies a handler checks itself are documented too', async () => {
    const { paths } = await openapi()
    const me = paths['/api/v9/users/@me'].get.responses!['200']
    expect(me.content!['application/json'].schema).toMatchObject({ properties: { id: {}, username: {}, mfa_enabled: {} } })
    expect(paths['/api/v9/guilds/{guildId}'].delete.responses!['204'].content).toBeUndefined()
    // POST /auth/login checks its body in the handler (a logged-in client gets its session whatever the body).
    expect(paths['/api/v9/auth/login'].post.requestBody).toMatchObject({ content: { 'application/json': { schema: { properties: { login: {}, password: {} } } } } })
    // The token endpoint answers RFC 6749's error body, not Discord's.
    expect(paths['/api/v9/oauth2/token'].post.responses!['4XX'].content!['application/json'].schema).toMatchObject({ properties: { error: {}, error_description: {} } })
  })
})
