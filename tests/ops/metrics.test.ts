// GET /metrics on the main port: off by default (a 404 like any unknown path), Prometheus text with METRICS=true,
// METRICS_TOKEN required when set; requests by route template and status, the latency histogram, gateway sockets and
// events, rate-limit refusals, database size, lobbies and users; no user data in labels. METRICS_PORT (a listener of
// its own) is tested on a child process in cli.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig, type Config } from '../../src/config'
import { enableMetrics, metricsEnabled, resetMetrics } from '../../src/core/metrics'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, onPostgres, resetWorld, server } from '../helpers'

let before: Config
let wasEnabled = false

beforeAll(async () => {
  await server()
  before = config()
  wasEnabled = metricsEnabled()
})
afterAll(() => {
  setConfig({ ...config(), metrics: before.metrics, metricsToken: before.metricsToken })
  enableMetrics(wasEnabled)
  resetWorld()
})

async function scrape(headers: Record<string, string> = {}) {
  const { url } = await server()
  return fetch(`${url}/metrics`, { headers })
}

/** The value of one sample line (`name{labels} value`), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

/** Responses are counted after they are sent: poll the scrape until `ok`. */
async function scrapeUntil(ok: (text: string) => boolean): Promise<string> {
  let text = ''
  for (let i = 0; i < 50; i++) {
    text = await (await scrape()).text()
    if (ok(text)) return text
    await Bun.sleep(10)
  }
  return text
}

describe('exposure', () => {
  test('off unless METRICS=true: /metrics is the usual JSON 404', async () => {
    setConfig({ ...config(), metrics: false })
    const r = await scrape()
    expect(r.status).toBe(404)
    expect(await r.json()).toEqual({ message: '404: Not Found', code: 0 })
  })

  test('METRICS_TOKEN: 401 without it or with a wrong one, 200 with Bearer <token>', async () => {
    setConfig({ ...config(), metrics: true, metricsToken: 'scrape-secret-1234' })
    try {
      expect((await scrape()).status).toBe(401)
      expect((await scrape({ authorization: 'Bearer wrong' })).status).toBe(401)
      expect((await scrape({ authorization: 'scrape-secret-1234' })).status).toBe(401)
      const ok = await scrape({ authorization: 'Bearer scrape-secret-1234' })
      expect(ok.status).toBe(200)
      expect(ok.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
    } finally {
      setConfig({ ...config(), metricsToken: undefined })
    }
  })
})

describe('content', () => {
  beforeAll(() => {
    setConfig({ ...config(), metrics: true })
    enableMetrics(true)
    resetMetrics()
  })

  test('requests by method, route template and status, and a latency histogram per route', async () => {
    const user = await makeUser()
    for (let i = 0; i < 3; i++) await api('GET', '/users/@me', { token: user.token })
    await api('GET', '/users/@me')
    const text = await scrapeUntil(
      (t) => sample(t, 'lobby_http_requests_total{method="GET",route="/api/v9/users/@me",status="200"}') === 3,
    )
    expect(text).toContain('# TYPE lobby_http_requests_total counter')
    expect(sample(text, 'lobby_http_requests_total{method="GET",route="/api/v9/users/@me",status="200"}')).toBe(3)
    expect(sample(text, 'lobby_http_requests_total{method="GET",route="/api/v9/users/@me",status="401"}')).toBe(1)
    expect(text).toContain('# TYPE lobby_http_request_duration_seconds histogram')
    expect(
      sample(text, 'lobby_http_request_duration_seconds_bucket{method="GET",route="/api/v9/users/@me",le="+Inf"}'),
    ).toBe(4)
    expect(sample(text, 'lobby_http_request_duration_seconds_count{method="GET",route="/api/v9/users/@me"}')).toBe(4)
    // Buckets are cumulative: each is at most the next.
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith('lobby_http_request_duration_seconds_bucket{method="GET",route="/api/v9/users/@me"'))
      .map((l) => Number(l.split(' ').at(-1)))
    expect(buckets.length).toBe(12)
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThanOrEqual(buckets[i - 1])
  })

  test('no user data in labels: unmatched paths, queries and odd methods are not label values', async () => {
    const secret = `tok${crypto.randomUUID().replace(/-/g, '')}`
    const { url } = await server()
    await fetch(`${url}/api/v9/nope/${secret}?q=${secret}`)
    await fetch(`${url}/wasntme/${secret}`)
    await fetch(`${url}/api/v9/users/@me`, { method: 'PROPFIND' })
    const text = await scrapeUntil((t) => t.includes('route="/wasntme/*"') && t.includes('method="OTHER"'))
    expect(text).not.toContain(secret)
    expect(text).toContain('lobby_http_requests_total{method="GET",route="<unmatched>",status="404"}')
    expect(text).not.toContain('PROPFIND')
  })

  test('gateway connections and events published, lobbies, users, database size', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const first = await scrapeUntil(() => true)
    const { client } = await GatewayClient.identified(user.token)
    const events = sample(first, 'lobby_gateway_events_published_total')!
    const lobbies = sample(first, 'lobby_lobbies')!
    const created = await api('POST', '/lobbies', {
      token: `Bot ${app.bot_token}`,
      body: { members: [{ id: user.id }] },
    })
    expect(created.status).toBe(201)
    await client.waitFor('LOBBY_CREATE')
    const text = await scrapeUntil((t) => sample(t, 'lobby_lobbies') === lobbies + 1)
    expect(sample(text, 'lobby_gateway_connections')).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'lobby_gateway_connections')).toBe(sample(first, 'lobby_gateway_connections')! + 1)
    expect(sample(text, 'lobby_gateway_events_published_total')).toBeGreaterThan(events)
    expect(sample(text, 'lobby_lobbies')).toBe(lobbies + 1)
    expect(sample(text, 'lobby_users')).toBeGreaterThanOrEqual(1)
    // The SQLite file and its WAL; on PostgreSQL 0 (the operator asks PostgreSQL: README, "Running on PostgreSQL").
    if (onPostgres) expect(sample(text, 'lobby_database_size_bytes')).toBe(0)
    else expect(sample(text, 'lobby_database_size_bytes')).toBeGreaterThan(4096)
    expect(text).toMatch(
      /^lobby_build_info\{version="[^"]+",commit="[^"]+",built="\d{4}-\d{2}-\d{2}",target="[^"]+"\} 1$/m,
    )
    client.close()
  })

  test('rate-limit refusals by limit name', async () => {
    const user = await makeUser()
    const before = sample(await scrapeUntil(() => true), 'lobby_rate_limit_refusals_total{limit="login-ip"}') ?? 0
    let refused = 0
    for (let i = 0; i < 40 && refused === 0; i++) {
      const r = await api('POST', '/auth/login', { body: { login: user.email, password: 'wrong password here' } })
      if (r.status === 429) refused++
    }
    expect(refused).toBe(1)
    const text = await scrapeUntil(() => true)
    const limits = text.split('\n').filter((l) => l.startsWith('lobby_rate_limit_refusals_total{'))
    expect(limits.length).toBeGreaterThanOrEqual(1)
    const total = limits.reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0)
    expect(total).toBeGreaterThanOrEqual(before + 1)
    expect(text).not.toContain(user.email)
  })
})
