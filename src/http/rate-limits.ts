// Discord's per-route rate limits, with the headers Discord's libraries pace themselves by: every API response carries
// X-RateLimit-Limit, -Remaining, -Reset (epoch seconds), -Reset-After (seconds) and -Bucket (a hash per route); one
// request past the limit gets 429 {message, retry_after, global: false} with Retry-After and X-RateLimit-Scope: user.
//
// A bucket is a route (method and path, the same under /api, /api/v9 and /api/v10); it counts per caller (who the
// Authorization resolves to: the user, the bot's application, the OAuth2 application and user, never the header's
// spelling; the client address, IPv6 by /64, for requests without a credential that resolves) and per major parameter
// (the lobby, channel or guild in the path), in fixed windows, as Discord's do. Counts live in memory (one process).
// These limits are for pacing well-behaved clients. The limits that protect accounts (core/ratelimit.ts: logins,
// codes, e-mails...) are separate and unchanged; their 429s carry these headers too.
//
// Hot path: one cached lookup of the route's bucket, the caller from the token cache (core/caller.ts; the identity
// check that follows reuses the answer), one string key, one Map lookup and five header values per request. No URL
// parsing.
import { appState } from '../core/app'
import { createHash } from 'node:crypto'
import { Elysia } from 'elysia'
import { config } from '../config'
import { type Caller, callerKey, resolveAuthorization } from '../core/caller'
import { clock } from '../core/clock'
import { ipKey } from '../core/ip-key'
import { clientIp } from './client-ip'
import { tooMany } from './errors'

export type RouteLimit = { method: string; path: string; limit: number; windowMs: number }

/** Every API route without a limit of its own. */
export const DEFAULT_ROUTE_LIMIT = { limit: 50, windowMs: 1000 }
/** What this module holds per App (core/app.ts). */
const newRouteLimits = () => ({
  /**
   * Routes with their own limit (path as mounted, without the /api/v* prefix): declared on the endpoint (`limit`,
   * http/endpoint.ts) and handed here by app.ts.
   */
  routeLimits: [] as RouteLimit[],
  /** route template → method → bucket (null: not rate limited, e.g. web pages). */
  buckets: new Map<string, Record<string, Bucket | null>>(),
  /** bucket + major parameter + caller → the current window. */
  windows: new Map<string, Window>(),
  lastSweep: 0,
})
declare module '../core/app' {
  interface AppState {
    routeLimits: ReturnType<typeof newRouteLimits>
  }
}
const held = appState('routeLimits', newRouteLimits)

/** The routes with their own limit (app.ts, from the endpoints' declarations); buckets are made again. */
export function setRouteLimits(limits: RouteLimit[]): void {
  const st = held()
  st.routeLimits = limits
  st.buckets.clear()
}

/** Path parameters that split a route's bucket, as Discord's channel and guild ids do. */
const MAJOR_PARAMETERS = ['lobbyId', 'channelId', 'guildId'] as const

type Bucket = {
  /** X-RateLimit-Bucket: a hash of the route. */
  id: string
  limit: number
  windowMs: number
  limitHeader: string
  /** Remaining counts as header strings, made once. */
  remaining: string[]
  major: (typeof MAJOR_PARAMETERS)[number] | undefined
}
type Window = { count: number; resetAt: number /** X-RateLimit-Reset, made once per window. */; reset: string }

const SWEEP_EVERY_MS = 10_000

const API_PREFIX = /^\/api(?:\/v\d+)?(?=\/)/

function makeBucket(route: string, method: string): Bucket | null {
  const prefix = API_PREFIX.exec(route)
  if (!prefix) return null
  const path = route.slice(prefix[0].length)
  if (path === '/docs' || path.startsWith('/docs/')) return null
  const rule = held().routeLimits.find((r) => r.method === method && r.path === path) ?? DEFAULT_ROUTE_LIMIT
  return {
    id: createHash('sha256').update(`${method} ${path}`).digest('hex').slice(0, 32),
    limit: rule.limit,
    windowMs: rule.windowMs,
    limitHeader: String(rule.limit),
    remaining: Array.from({ length: rule.limit + 1 }, (_, i) => String(i)),
    major: MAJOR_PARAMETERS.find((p) => path.includes(`/:${p}`)),
  }
}

function bucketFor(route: string, method: string): Bucket | null {
  const st = held()
  let byMethod = st.buckets.get(route)
  if (!byMethod) st.buckets.set(route, (byMethod = Object.create(null) as Record<string, Bucket | null>))
  let bucket = byMethod[method]
  if (bucket === undefined) bucket = byMethod[method] = makeBucket(route, method)
  return bucket
}

/** Milliseconds as seconds with three decimals, as Discord writes them. */
const seconds = (ms: number) => (ms / 1000).toFixed(3)
/** Reset-After for every millisecond of a one-second window, made once (toFixed per request was ~3 % of a GET). */
const AFTER = Array.from({ length: 1001 }, (_, ms) => seconds(ms))

function sweep(now: number): void {
  const st = held()
  st.lastSweep = now
  for (const [key, w] of st.windows) if (w.resetAt <= now) st.windows.delete(key)
}

type Headers = Record<string, string | number>
type IpSource = { requestIP(request: Request): { address: string } | null } | null

/**
 * What the rate limit learnt of the request's Authorization: its caller, null when it has none or it resolves to
 * nobody, undefined when the limit did not look (a route without a bucket).
 */
export type Looked = Caller | null | undefined

/**
 * The caller to check a route's rule against, given what the rate limit learnt: a token it found unknown is not looked
 * up again; a known one is asked again from the cache, so a token ended while the body streamed fails.
 */
export function callerAfterLimit(request: Request, looked: Looked): Caller | undefined | Promise<Caller | undefined> {
  return looked === null ? undefined : resolveAuthorization(request.headers.get('authorization'))
}

/**
 * Count the request in its route's window and add the X-RateLimit headers; throws the 429 past the limit. Returns
 * what it learnt of the caller (see Looked): at once when the token cache knew the token, else a promise.
 */
export function limit(
  route: string,
  request: Request,
  params: Record<string, string> | undefined,
  headers: Headers,
  server: IpSource,
): Looked | Promise<Looked> {
  if (headers['x-ratelimit-bucket'] !== undefined || !route) return undefined
  const bucket = bucketFor(route, request.method)
  if (!bucket) return undefined
  const resolved = resolveAuthorization(request.headers.get('authorization'))
  if (resolved instanceof Promise)
    return resolved.then((caller) => count(bucket, caller ?? null, request, params, headers, server))
  return count(bucket, resolved ?? null, request, params, headers, server)
}

function count(
  bucket: Bucket,
  looked: Caller | null,
  request: Request,
  params: Record<string, string> | undefined,
  headers: Headers,
  server: IpSource,
): Looked {
  const st = held()
  const caller = looked ? callerKey(looked) : `ip${ipKey(clientIp(request, server))}`
  const key = bucket.major ? `${bucket.id}:${params?.[bucket.major] ?? ''}:${caller}` : `${bucket.id}::${caller}`
  const now = clock.now()
  let w = st.windows.get(key)
  if (!w) {
    if (now - st.lastSweep > SWEEP_EVERY_MS) sweep(now)
    const resetAt = now + bucket.windowMs
    st.windows.set(key, (w = { count: 0, resetAt, reset: seconds(resetAt) }))
  } else if (now >= w.resetAt || w.resetAt - now > bucket.windowMs) {
    // A new window (also when the clock went back, in tests).
    w.count = 0
    w.resetAt = now + bucket.windowMs
    w.reset = seconds(w.resetAt)
  }
  const resetAfterMs = w.resetAt - now
  headers['x-ratelimit-bucket'] = bucket.id
  headers['x-ratelimit-limit'] = bucket.limitHeader
  headers['x-ratelimit-reset'] = w.reset
  headers['x-ratelimit-reset-after'] = AFTER[resetAfterMs] ?? seconds(resetAfterMs)
  if (w.count >= bucket.limit && config().routeRateLimits) {
    headers['x-ratelimit-remaining'] = '0'
    throw tooMany(resetAfterMs)
  }
  if (w.count < bucket.limit) w.count += 1
  headers['x-ratelimit-remaining'] = bucket.remaining[bucket.limit - w.count]
  return looked
}

/** Where the Elysia hooks leave what the limit learnt, for the identity check (identity.ts) on the same context. */
export const LOOKED = '__looked'
type LimitContext = {
  route: string
  request: Request
  params: unknown
  set: { headers: unknown }
  server: IpSource
  [LOOKED]?: Looked
}

// Each hook destructures its context and never hands it on whole: Elysia reads a hook's source to decide what to
// prepare per request (a context passed to a function would make it parse headers, query and cookies every time).
export const rateLimits = new Elysia({ name: 'rate-limits' })
  // Parse runs before transform for requests with a body: count there first, so a refused body is counted too.
  // Returning nothing lets the body parser (http/body.ts) run next.
  .onParse({ as: 'global' }, async (ctx) => {
    const { route, request, params, set, server } = ctx as unknown as LimitContext
    const looked = await limit(route, request, params as Record<string, string>, set.headers as Headers, server)
    if (looked !== undefined) (ctx as unknown as LimitContext)[LOOKED] = looked
  })
  .onTransform({ as: 'global' }, async (ctx) => {
    const { route, request, params, set, server } = ctx as unknown as LimitContext
    const looked = await limit(route, request, params as Record<string, string>, set.headers as Headers, server)
    if (looked !== undefined) (ctx as unknown as LimitContext)[LOOKED] = looked
  })
  .as('global')

/** Tests: forget every window. */
export function resetRouteLimits(): void {
  held().windows.clear()
}
