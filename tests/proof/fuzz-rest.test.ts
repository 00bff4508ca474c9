// Property-based fuzzing of every REST route in the OpenAPI document (issue 19). For each route, fast-check generates
// requests — path parameters, query strings, headers and bodies shaped by the route's own schema, then mutated — sent
// as every caller kind over both API versions. Properties: never a 5xx; a 4xx is always a Discord error body (RFC 6749
// bodies on the OAuth2 token endpoints); no stack trace or internal path in any answer; an answer within a bound; no
// other user's data in any answer; afterwards the server is healthy, its prototypes clean, its RSS bounded and its
// database intact. The server runs in its own process (tests/proof/target.ts).
//
// A fixed seed and a few thousand cases here; more by hand: FUZZ_RUNS=100000 bun run fuzz (FUZZ_SEED to change it).
// A failure prints the route, the seed and the path that replays it, and the smallest failing request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  bodyBytes,
  contentType,
  encodeURIComponentLoose,
  extraHeaders,
  fromSchema,
  mutated,
  pathParam,
  queryString,
  setKnownIds,
} from './arbitraries'
import { startTarget, type Target } from './target-client'

const SEED = Number(process.env.FUZZ_SEED ?? 19_19_19)
const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 0)
const DEFAULT_RUNS_PER_ROUTE = 30
const REQUEST_TIMEOUT_MS = 5_000
/** FUZZ_STATS=1 prints the statuses each route answered (how deep the generated requests reach). */
const STATS = Boolean(process.env.FUZZ_STATS)
const stats: Record<string, Record<number, number>> = {}

let target: Target
beforeAll(async () => {
  target = await startTarget()
}, 60_000)
afterAll(() => target?.stop())

type Caller = 'none' | 'user' | 'bot' | 'bearer' | 'narrowBearer' | 'foreignBot' | 'bogus'
type World = {
  token: string
  bearer: string
  narrowBearer: string
  guild: string
  channel: string
  role: string
  invite: string
  message: string
  lobby: string
}
type Generated = {
  caller: Caller
  version: string
  params: string[]
  query: string
  headers: Record<string, string>
  type: string
  body?: Uint8Array
}

const INTERNAL = /(\/work\/|\/src\/|\/tests\/|node_modules|\.ts:\d+|\bat [\w.<>]+ \(|Error: )/

function tokenFor(caller: Caller, world: World): string | undefined {
  const f = target.fixtures
  switch (caller) {
    case 'none':
      return undefined
    case 'user':
      return world.token
    case 'bot':
      return f.game.bot
    case 'foreignBot':
      return f.other.bot
    case 'bearer':
      return world.bearer
    case 'narrowBearer':
      return world.narrowBearer
    case 'bogus':
      return 'Bot not.a.token'
  }
}

/** Real IDs a path parameter may name, so most requests get past "unknown ...". */
function realValues(name: string, world: World): string[] {
  const f = target.fixtures
  switch (name) {
    case 'lobbyId':
      return [world.lobby, f.bob.lobby]
    case 'guildId':
      return [world.guild, f.bob.guild]
    case 'channelId':
      return [world.channel, f.bob.channel]
    case 'userId':
      return [f.alice.id, f.bob.id, '@me']
    case 'roleId':
      return [world.role, world.guild]
    case 'code':
      return [world.invite]
    case 'type':
      return ['totp', 'sms', 'backup', 'webauthn', 'password']
    case 'id':
      return ['AAAA', world.message]
  }
  return []
}

/** Hand-written valid shapes for the routes whose handlers read the body themselves (no schema to derive from). */
function knownBody(method: string, path: string): fc.Arbitrary<unknown> | undefined {
  const f = target.fixtures
  if (path.endsWith('/auth/login')) {
    return fc.record(
      {
        login: fc.oneof(fc.constant(f.alice.email), fc.emailAddress(), fc.constant('+15555550100')),
        password: fc.oneof(fc.constant('wrong password!'), fc.string({ minLength: 8, maxLength: 72 })),
        undelete: fc.boolean(),
        login_source: fc.constantFrom('gift', null, 'x'),
        gift_code_sku_id: fc.constantFrom('1', null),
      },
      { requiredKeys: ['login', 'password'] },
    )
  }
  if (path.endsWith('/oauth2/token') || path.endsWith('/oauth2/token/revoke')) {
    return fc.record(
      {
        grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'client_credentials', 'password', ''),
        client_id: fc.constantFrom(f.game.id, f.other.id, 'x'),
        client_secret: fc.constantFrom(f.game.secret, 'wrong'),
        code: fc.string(),
        refresh_token: fc.string(),
        token: fc.string(),
        redirect_uri: fc.constantFrom('http://localhost/callback', 'http://evil/'),
        code_verifier: fc.string({ minLength: 40, maxLength: 130 }),
        scope: fc.constantFrom('identify', 'identify lobbies.write', 'bogus', ''),
      },
      { requiredKeys: [] },
    )
  }
  return method === 'GET' || method === 'DELETE' ? undefined : fc.jsonValue({ maxDepth: 2 })
}

function requestArbitrary(
  method: string,
  path: string,
  schema: { body: any; query: any },
  world: World,
): fc.Arbitrary<Generated> {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])
  const valid = schema.body ? fromSchema(schema.body) : knownBody(method, path)
  const value = valid ? fc.oneof({ weight: 2, arbitrary: valid }, { weight: 3, arbitrary: mutated(valid) }) : undefined
  const form = path.includes('/oauth2/token')
  return fc.record({
    caller: fc.constantFrom<Caller>('none', 'user', 'bot', 'bearer', 'narrowBearer', 'foreignBot', 'bogus'),
    version: fc.constantFrom('/api/v9', '/api/v10', '/api'),
    params: fc.tuple(...names.map((n) => pathParam(realValues(n, world)))) as fc.Arbitrary<string[]>,
    query: fc.oneof({ weight: 3, arbitrary: queryString(schema.query) }, { weight: 1, arbitrary: fc.constant('') }),
    headers: extraHeaders,
    type: form
      ? fc.constantFrom('application/x-www-form-urlencoded', 'application/json', 'multipart/form-data; boundary=x')
      : contentType,
    body: value
      ? fc.oneof(
          { weight: 8, arbitrary: form ? formBytes(value) : bodyBytes(value) },
          { weight: 1, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.constant(new Uint8Array()) },
        )
      : fc.option(bodyBytes(fc.jsonValue({ maxDepth: 2 })), { nil: undefined, freq: 4 }),
  })
}

/** Form bodies (OAuth2 token endpoints): fields with good and odd values, repeats, bad escapes. */
function formBytes(value: fc.Arbitrary<unknown>): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(
      value,
      fc.constantFrom('', '&grant_type=refresh_token', '&%ff=%ff', '&a=%', '&__proto__=1', '&client_id=1&client_id=2'),
    )
    .map(([v, extra]) => {
      const fields =
        v && typeof v === 'object' && !Array.isArray(v)
          ? Object.entries(v as Record<string, unknown>)
          : [['x', JSON.stringify(v)]]
      const text = fields
        .map(
          ([k, x]) =>
            `${encodeURIComponentLoose(String(k))}=${encodeURIComponentLoose(typeof x === 'string' ? x : (JSON.stringify(x) ?? ''))}`,
        )
        .join('&')
      return new TextEncoder().encode(text + extra)
    })
}

type Outcome = { status: number; text: string; ms: number; contentType: string | null }

async function send(method: string, path: string, g: Generated, world: World): Promise<Outcome> {
  let i = 0
  const filled = path.replace(/\{(\w+)\}/g, () => g.params[i++] ?? '')
  const url = `${target.url}${g.version}${filled.replace(/^\/api\/v9/, '')}${g.query}`
  const headers = new Headers()
  for (const [k, v] of Object.entries(g.headers)) headers.set(k, v)
  const token = tokenFor(g.caller, world)
  if (token) headers.set('authorization', token)
  const hasBody = g.body !== undefined && method !== 'GET' && method !== 'HEAD'
  if (hasBody && g.type) headers.set('content-type', g.type)
  const start = performance.now()
  const response = await fetch(url, {
    method,
    headers,
    body: hasBody ? g.body : undefined,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const text = await response.text()
  return {
    status: response.status,
    text,
    ms: performance.now() - start,
    contentType: response.headers.get('content-type'),
  }
}

/** What is wrong with an answer, or undefined. */
function problem(path: string, outcome: Outcome): string | undefined {
  const f = target.fixtures
  if (outcome.status >= 500) return `status ${outcome.status}`
  if (INTERNAL.test(outcome.text)) return 'internal detail (stack trace or path) in the answer'
  for (const leak of [f.secret, f.bob.email, f.bob.token, f.bob.bearer.slice(7)])
    if (outcome.text.includes(leak)) return 'another user’s data in the answer'
  if (outcome.status >= 400) {
    let body: any
    try {
      body = JSON.parse(outcome.text)
    } catch {
      return `a ${outcome.status} that is not JSON`
    }
    // The token endpoints answer RFC 6749 bodies ({error, error_description}) to what reaches them.
    if (path.includes('/oauth2/token') && typeof body?.error === 'string') return undefined
    if (typeof body?.code !== 'number' || typeof body?.message !== 'string')
      return `a ${outcome.status} that is not a Discord error body`
    if (body.code === 50035 && body.errors !== undefined && (typeof body.errors !== 'object' || body.errors === null))
      return 'a form error whose errors is not an object'
    if (outcome.status === 429 && typeof body.retry_after !== 'number') return 'a 429 without retry_after'
  }
  return undefined
}

function describeRequest(method: string, path: string, g: Generated): string {
  const body = g.body ? Buffer.from(g.body).toString('latin1') : '(none)'
  return JSON.stringify({
    method,
    path,
    caller: g.caller,
    version: g.version,
    params: g.params.map((p) => (p.length > 80 ? `${p.slice(0, 80)}…(${p.length})` : p)),
    query: g.query.slice(0, 300),
    headers: g.headers,
    type: g.type,
    body: body.length > 300 ? `${body.slice(0, 300)}…(${body.length} bytes)` : body,
  })
}

test(
  'every route answers generated and mutated requests from every caller with a 4xx Discord error or a success, in time, leaking nothing',
  async () => {
    const doc = (await (await fetch(`${target.url}/api/docs/json`)).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const routes = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })),
    )
    expect(routes.length).toBeGreaterThan(80)
    const runs = TOTAL_RUNS > 0 ? Math.ceil(TOTAL_RUNS / routes.length) : DEFAULT_RUNS_PER_ROUTE
    const before = await target.call<any>('health')
    let peakRss = before.rss
    const failures: string[] = []
    let requests = 0
    for (const [index, { method, path }] of routes.entries()) {
      const elysiaPath = path.replace(/\{(\w+)\}/g, ':$1')
      const schema = target.fixtures.schemas.find((s: any) => s.method === method && s.path === elysiaPath)
      if (!schema) {
        failures.push(`${method} ${path}: in the OpenAPI document but not a route of the app`)
        continue
      }
      const world = await target.call<World>('world')
      setKnownIds([
        target.fixtures.alice.id,
        target.fixtures.bob.id,
        world.guild,
        world.channel,
        world.lobby,
        world.role,
        world.message,
        target.fixtures.game.id,
      ])
      const seed = SEED + index
      let last: { g: Generated; outcome?: Outcome } | undefined
      const result = await fc.check(
        fc.asyncProperty(requestArbitrary(method, path, schema, world), async (g) => {
          requests += 1
          last = { g }
          let outcome: Outcome
          try {
            outcome = await send(method, path, g, world)
          } catch (error) {
            throw new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms (${String(error)})`)
          }
          last.outcome = outcome
          if (STATS) {
            const key = `${method} ${path}`
            const counts = (stats[key] ??= {})
            counts[outcome.status] = (counts[outcome.status] ?? 0) + 1
          }
          const wrong = problem(path, outcome)
          if (wrong) throw new Error(`${wrong}: ${outcome.status} ${outcome.text.slice(0, 400)}`)
        }),
        { seed, numRuns: runs, endOnFailure: false, markInterruptAsFailure: true },
      )
      if (result.failed) {
        const g = result.counterexample?.[0] as Generated | undefined
        failures.push(
          `${method} ${path} (seed ${result.seed}, path "${result.counterexamplePath}"): ${String((result.errorInstance as Error)?.message ?? result.errorInstance).slice(0, 600)}\n    request: ${g ? describeRequest(method, path, g) : describeRequest(method, path, last!.g)}`,
        )
      }
      if (index % 10 === 9) {
        const rss = (await target.call<any>('health')).rss
        peakRss = Math.max(peakRss, rss)
        if (STATS) console.log(`after ${index + 1} routes, ${requests} requests: RSS ${(rss / 2 ** 20).toFixed(0)} MiB`)
      }
    }
    const after = await target.call<any>('health')
    if (STATS)
      for (const [route, counts] of Object.entries(stats)) console.log(route.padEnd(70), JSON.stringify(counts))
    peakRss = Math.max(peakRss, after.rss)
    if (failures.length) console.error(`fuzz failures (FUZZ_SEED=${SEED}):\n${failures.join('\n')}`)
    expect(failures).toEqual([])
    // Healthy afterwards: prototypes untouched, the database intact, memory bounded, a normal request answered.
    expect(after.prototypes).toEqual(after.pristine)
    expect(after.polluted).toEqual([])
    expect(after.database.integrity).toEqual(['ok'])
    expect(after.database.foreign).toEqual([])
    expect(peakRss).toBeLessThan(before.rss + 768 * 1024 * 1024)
    expect((await fetch(`${target.url}/healthz`)).status).toBe(200)
    const world = await target.call<World>('world')
    expect((await fetch(`${target.url}/api/v9/users/@me`, { headers: { authorization: world.token } })).status).toBe(
      200,
    )
    expect(target.errors.filter((line) => / ERROR /.test(line))).toEqual([])
    expect(requests).toBeGreaterThanOrEqual(routes.length * runs)
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`
    console.log(
      `fuzz-rest: ${routes.length} routes, ${requests} requests (seed ${SEED}); server RSS ${mib(before.rss)} before, ${mib(peakRss)} at most, ${mib(after.rss)} after`,
    )
  },
  TOTAL_RUNS > 0 ? Math.max(300_000, TOTAL_RUNS * 50) : 120_000,
)
