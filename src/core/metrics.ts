// Prometheus metrics kept in plain Maps and rendered as text (exposition format 0.0.4) when scraped.
// Labels carry only what the server defines: methods, route templates, statuses, limit names; never user data.
// Nothing is recorded until enableMetrics(true) (METRICS or METRICS_PORT), so a server without metrics pays nothing.
import { appState } from './app'

/** Request latency buckets, in seconds. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

type Histogram = { method: string; route: string; counts: number[]; sum: number; count: number }
type Sample = [labels: Record<string, string>, value: number]
type Reading = number | Sample[]
type Collected = { name: string; help: string; type: 'gauge' | 'counter'; read: () => Reading | Promise<Reading> }

/** What this module holds per App (core/app.ts). */
const newMetrics = () => ({
  on: false,
  requests: new Map<string, { method: string; route: string; status: number; count: number }>(),
  latency: new Map<string, Histogram>(),
  refusals: new Map<string, number>(),
  eventsPublished: 0,
  collected: [] as Collected[],
})
declare module './app' {
  interface AppState {
    metrics: ReturnType<typeof newMetrics>
  }
}
const held = appState('metrics', newMetrics)

export function enableMetrics(value: boolean): void {
  held().on = value
}

export function metricsEnabled(): boolean {
  return held().on
}

/** One answered HTTP request (the access log's hook calls this). */
export function recordRequest(rawMethod: string, route: string, status: number, seconds: number): void {
  const st = held()
  if (!st.on) return
  const method = METHODS.has(rawMethod) ? rawMethod : 'OTHER'
  const key = `${method} ${route} ${status}`
  const counter = st.requests.get(key)
  if (counter) counter.count++
  else st.requests.set(key, { method, route, status, count: 1 })
  const hKey = `${method} ${route}`
  let h = st.latency.get(hKey)
  if (!h)
    st.latency.set(hKey, (h = { method, route, counts: new Array(LATENCY_BUCKETS.length).fill(0), sum: 0, count: 0 }))
  for (let i = 0; i < LATENCY_BUCKETS.length; i++) if (seconds <= LATENCY_BUCKETS[i]) h.counts[i]++
  h.sum += seconds
  h.count++
}

/** One Gateway dispatch published (to however many sockets). */
export function countEventPublished(): void {
  const st = held()
  if (st.on) st.eventsPublished++
}

/** A request refused by a rate limit; `limit` is the limit's fixed name. */
export function countRateLimitRefusal(limit: string): void {
  const st = held()
  if (!st.on) return
  const name = /^[\w.:-]{1,64}$/.test(limit) ? limit : 'other'
  st.refusals.set(name, (st.refusals.get(name) ?? 0) + 1)
}

/** A value read at scrape time (open sockets, database size, row counts: a store's promise). */
export function collect(
  name: string,
  help: string,
  type: 'gauge' | 'counter',
  read: () => Reading | Promise<Reading>,
): void {
  const st = held()
  const existing = st.collected.findIndex((c) => c.name === name)
  if (existing >= 0) st.collected.splice(existing, 1)
  st.collected.push({ name, help, type, read })
}

/** Tests: forget what was counted. */
export function resetMetrics(): void {
  const st = held()
  st.requests.clear()
  st.latency.clear()
  st.refusals.clear()
  st.eventsPublished = 0
}

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function labels(pairs: Record<string, string | number>): string {
  const body = Object.entries(pairs)
    .map(([k, v]) => `${k}="${escape(String(v))}"`)
    .join(',')
  return body ? `{${body}}` : ''
}

function header(lines: string[], name: string, help: string, type: string): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`)
}

export async function renderMetrics(): Promise<string> {
  const st = held()
  const lines: string[] = []
  header(
    lines,
    'lobby_http_requests_total',
    'HTTP st.requests answered, by method, route template and status.',
    'counter',
  )
  for (const r of st.requests.values())
    lines.push(`lobby_http_requests_total${labels({ method: r.method, route: r.route, status: r.status })} ${r.count}`)
  header(
    lines,
    'lobby_http_request_duration_seconds',
    'Time from request to response, by method and route template.',
    'histogram',
  )
  for (const h of st.latency.values()) {
    LATENCY_BUCKETS.forEach((le, i) =>
      lines.push(
        `lobby_http_request_duration_seconds_bucket${labels({ method: h.method, route: h.route, le })} ${h.counts[i]}`,
      ),
    )
    lines.push(
      `lobby_http_request_duration_seconds_bucket${labels({ method: h.method, route: h.route, le: '+Inf' })} ${h.count}`,
    )
    lines.push(`lobby_http_request_duration_seconds_sum${labels({ method: h.method, route: h.route })} ${h.sum}`)
    lines.push(`lobby_http_request_duration_seconds_count${labels({ method: h.method, route: h.route })} ${h.count}`)
  }
  header(
    lines,
    'lobby_gateway_events_published_total',
    'Gateway dispatches published (each reaches every subscribed socket).',
    'counter',
  )
  lines.push(`lobby_gateway_events_published_total ${st.eventsPublished}`)
  header(lines, 'lobby_rate_limit_refusals_total', 'Requests refused by a rate limit (429), by limit.', 'counter')
  for (const [limit, count] of st.refusals) lines.push(`lobby_rate_limit_refusals_total${labels({ limit })} ${count}`)
  for (const c of st.collected) {
    let value: Reading
    try {
      value = await c.read()
    } catch {
      continue
    }
    header(lines, c.name, c.help, c.type)
    if (typeof value === 'number') lines.push(`${c.name} ${value}`)
    else for (const [l, v] of value) lines.push(`${c.name}${labels(l)} ${v}`)
  }
  return lines.join('\n') + '\n'
}
