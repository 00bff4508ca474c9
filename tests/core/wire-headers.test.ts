// Issue 28: every JSON answer says exactly `Content-Type: application/json` (discord.py compares the header with `==`
// and reads anything else as text) and every API answer carries a `Via` header (discord.py reads a 429 without one as
// a Cloudflare ban and gives up). Every operation of /api/docs/json is called as nobody, a user, the app's bot and an
// OAuth2 bearer, with an empty body and a wrong-typed copy of its example, on ids that exist and on ids that do not;
// then a 429 of each kind: the lane's, an Elysia route's, and an account limit's.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { createSession } from '../../src/accounts/sessions'
import { config, setConfig } from '../../src/config'
import { routeLimits } from '../../src/http/endpoint'
import { lobbyEndpoints } from '../../src/lobbies/routes'
import { makeApp, makeUser, resetWorld, server, type Reply } from '../helpers'
import { makeGuild } from '../guilds/helpers'
import { createLobby } from '../lobbies/helpers'
import { bearerFor } from '../oauth2/helpers'

type Operation = {
  requestBody?: { content: Record<string, { example?: unknown }> }
  security?: Record<string, string[]>[]
}
let paths: Record<string, Record<string, Operation>>

beforeAll(async () => {
  const { url } = await server()
  paths = ((await (await fetch(`${url}/api/docs/json`)).json()) as { paths: typeof paths }).paths
})
afterEach(resetWorld)

/** What is wrong with one answer's headers. */
function headerProblems(label: string, reply: Reply, text: string): string[] {
  const problems: string[] = []
  if (!reply.headers.get('via')) problems.push(`${label}: ${reply.status} without Via`)
  let isJson = false
  try {
    JSON.parse(text)
    isJson = text !== ''
  } catch {}
  const type = reply.headers.get('content-type')
  if (isJson && type !== 'application/json') problems.push(`${label}: ${reply.status} JSON answered as ${type}`)
  if (!isJson && type?.startsWith('application/json'))
    problems.push(`${label}: ${reply.status} says ${type} but its body is not JSON: ${text.slice(0, 80)}`)
  return problems
}

async function call(method: string, path: string, token?: string, body?: string): Promise<[Reply, string]> {
  const { url } = await server()
  const headers: Record<string, string> = {}
  if (token) headers.authorization = token
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(`${url}${path}`, { method, headers, body })
  const text = await response.text()
  return [{ status: response.status, body: null, headers: response.headers }, text]
}

/** A body of the example's shape with every field's type wrong. */
function wrongTyped(example: unknown): unknown {
  if (Array.isArray(example)) return example.length ? [wrongTyped(example[0])] : 'not-an-array'
  if (example && typeof example === 'object')
    return Object.fromEntries(Object.entries(example).map(([k, v]) => [k, typeof v === 'string' ? 12 : 'wrong']))
  return { wrong: true }
}

describe('Content-Type and Via on every answer of every documented operation', () => {
  test('each operation as nobody, a user, a bot and a bearer; empty and wrong-typed bodies; real and unknown ids', async () => {
    const { owner: user, guild, channelId } = await makeGuild()
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const scopeOf = (op: Operation) => (op.security ?? []).flatMap((s) => s.OAuth2Bearer ?? [])[0] || 'identify'
    // Every bearer first: some operations end the user's session (logout) that authorizing needs.
    const bearers = new Map<string, string>()
    for (const ops of Object.values(paths))
      for (const op of Object.values(ops))
        if (!bearers.has(scopeOf(op))) bearers.set(scopeOf(op), await bearerFor(user, app, scopeOf(op)))
    const problems: string[] = []
    let calls = 0
    for (const [template, ops] of Object.entries(paths)) {
      for (const [method, op] of Object.entries(ops)) {
        // A lobby of its own per operation: a DELETE must not take away the next operation's lobby.
        const lobby = template.includes('{lobbyId}') ? await createLobby(bot, { members: [{ id: user.id }] }) : null
        const real: Record<string, string> = {
          lobbyId: lobby?.id ?? '1',
          userId: user.id,
          guildId: guild.id,
          channelId,
          type: 'totp',
        }
        const example = op.requestBody?.content['application/json']?.example
        // Not the example itself: tests/core/docs-answers.test.ts sends it (and checks both headers on its answer),
        // and it names single things (the example registration) that must still be free there.
        const bodies = example === undefined ? [undefined] : ['{}', JSON.stringify(wrongTyped(example))]
        for (const ids of ['real', 'unknown'])
          for (const body of bodies)
            for (const token of [
              undefined,
              (await createSession(user.id, { platform: 'test' })).token,
              bot,
              bearers.get(scopeOf(op)),
            ]) {
              const path = template.replace(/\{(\w+)\}/g, (_, name: string) =>
                ids === 'real' ? (real[name] ?? '1') : name === 'type' ? 'totp' : '1',
              )
              const [reply, text] = await call(method.toUpperCase(), path, token, body)
              calls++
              problems.push(...headerProblems(`${method.toUpperCase()} ${path}`, reply, text))
            }
      }
    }
    expect(calls).toBeGreaterThan(500)
    expect(problems).toEqual([])
  }, 120_000)

  test('answers outside the documented operations: unknown routes, bad JSON, the docs, 405s', async () => {
    const app = await makeApp()
    const problems: string[] = []
    for (const [method, path, body] of [
      ['GET', '/api/v9/no-such-route'],
      ['GET', '/api/v10/users/%40me'],
      ['POST', '/api/v9/lobbies', '{not json'],
      ['GET', '/api/docs/json'],
      ['GET', '/healthz'],
      ['PATCH', '/api/v9/gateway'],
    ] as [string, string, string?][]) {
      const [reply, text] = await call(method, path, `Bot ${app.bot_token}`, body)
      problems.push(...headerProblems(`${method} ${path}`, reply, text))
    }
    expect(problems).toEqual([])
  })
})

describe('a 429 carries Via and the exact content type', () => {
  beforeAll(() => setConfig({ ...config(), routeRateLimits: true }))
  afterAll(() => setConfig({ ...config(), routeRateLimits: false }))

  async function until429(send: () => Promise<[Reply, string]>): Promise<[Reply, string]> {
    for (let i = 0; i < 200; i++) {
      const answer = await send()
      if (answer[0].status === 429) return answer
    }
    throw new Error('never limited')
  }

  function check429([reply, text]: [Reply, string]) {
    expect(headerProblems('429', reply, text)).toEqual([])
    expect(reply.headers.get('via')).toBe('1.1 google')
    expect(reply.headers.get('retry-after')).toBeString()
    expect(JSON.parse(text).retry_after).toBeNumber()
  }

  test("the lane's route limit (POST /lobbies/{id}/messages)", async () => {
    expect(routeLimits(lobbyEndpoints).some((r) => r.path === '/lobbies/:lobbyId/messages')).toBe(true)
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const lobby = await createLobby(bot)
    check429(await until429(() => call('POST', `/api/v9/lobbies/${lobby.id}/messages`, bot, '{"content":"hi"}')))
  })

  test("an Elysia route's limit (GET /gateway/bot)", async () => {
    const app = await makeApp()
    check429(await until429(() => call('GET', '/api/v10/gateway/bot', `Bot ${app.bot_token}`)))
  })

  test('an account limit (wrong passwords)', async () => {
    const user = await makeUser()
    const body = JSON.stringify({ login: user.email, password: 'wrong password, again and again' })
    check429(await until429(() => call('POST', '/api/v9/auth/login', undefined, body)))
  })
})
