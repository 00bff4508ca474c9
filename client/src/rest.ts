// REST: fetch under `${baseUrl}/api/v10`, JSON in and out, the token's Authorization, Discord's rate limits kept
// (per-route buckets from X-RateLimit-*, a 429 waited out by its retry_after up to a cap, the global limit), MFA
// elevation (60003) answered once through the app's handler, and every failure as ApiError or ConnectionError.
import type { Api } from './api.gen'
import type { Method, RouteBody, RouteOf, RouteQuery, RouteResponse } from './routes'
import { ApiError, ConnectionError, type MfaRequired } from './errors'

export type RestOptions = {
  /** The server, e.g. https://lobbies.example.com (its `/api/v10` is added). */
  baseUrl: string
  /** API version of the path prefix (9 and 10 are the same here). Default 10. */
  apiVersion?: number
  /** The longest 429 wait (seconds) the client sits out before it throws the 429. Default 10. */
  maxRetryAfter?: number
  /** How many times one call is retried after 429s (and a 502/503/504 for GET). Default 3. */
  retries?: number
  /** Milliseconds before a call is given up (ConnectionError). Default 30 000. */
  timeout?: number
  /** Another fetch (tests, a proxy). */
  fetch?: Fetch
}

/** The fetch the client calls (the global one by default). */
export type Fetch = (input: string, init: RequestInit) => Promise<Response>

/** Answers a 60003 with the JWT of a proved factor, or undefined to give up (the call throws the 60003). */
export type MfaHandler = (mfa: MfaRequired) => Promise<string | undefined | null> | string | undefined | null

export type RequestOptions = {
  /** The JSON body. */
  body?: unknown
  /** A form body (application/x-www-form-urlencoded: the OAuth2 token endpoints). */
  form?: Record<string, string>
  /** Query string values (undefined ones are left out). */
  query?: Record<string, string | number | boolean | undefined>
  /** Extra headers for this call (e.g. X-Service-MFA-Authorization, X-Fingerprint). */
  headers?: Record<string, string>
  /** false: send no Authorization (login, registration). A string: this Authorization instead of the token's. */
  auth?: boolean | string
  /** false: a 60003 is thrown as it is, the MFA handler is not asked. */
  elevate?: boolean
  signal?: AbortSignal
}

type Bucket = { remaining: number; resetAt: number }
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
/** Segments whose id names a major parameter (its own limit window), as Discord's buckets are keyed. */
const MAJOR = new Set(['channels', 'guilds', 'lobbies', 'webhooks'])

/** `POST /lobbies/:id/messages` and its major id, so `/lobbies/1/...` and `/lobbies/2/...` keep apart. */
export function routeKey(method: string, path: string): { route: string; major: string } {
  const segments = path.split('?')[0].split('/')
  let major = ''
  const route = segments
    .map((segment, i) => {
      if (!/^\d{1,20}$/.test(segment)) return segment
      if (!major && MAJOR.has(segments[i - 1])) major = segment
      return ':id'
    })
    .join('/')
  return { route: `${method} ${route}`, major }
}

export class Rest {
  readonly baseUrl: string
  readonly apiVersion: number
  maxRetryAfter: number
  retries: number
  timeout: number
  /** Route → the bucket the server named for it. */
  private readonly routeBuckets = new Map<string, string>()
  /** Bucket:major → what is left of its window. */
  private readonly buckets = new Map<string, Bucket>()
  /** Calls of one route and major go one after another (as discord.js does), so a bucket is never overrun. */
  private readonly queues = new Map<string, Promise<void>>()
  private globalUntil = 0
  private readonly fetcher: Fetch
  /** The Authorization of the current token (set by the Client). */
  authorization: () => string | undefined = () => undefined
  /** The app's answer to a 60003 (the accounts module installs the default). */
  onMfaRequired?: MfaHandler

  constructor(options: RestOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.apiVersion = options.apiVersion ?? 10
    this.maxRetryAfter = options.maxRetryAfter ?? 10
    this.retries = options.retries ?? 3
    this.timeout = options.timeout ?? 30_000
    this.fetcher = options.fetch ?? ((input, init) => fetch(input, init))
  }

  /** The URL of an API path (`/users/@me` → `${baseUrl}/api/v10/users/@me`). */
  url(path: string, query?: RequestOptions['query']): string {
    let url = `${this.baseUrl}/api/v${this.apiVersion}${path.startsWith('/') ? path : `/${path}`}`
    const entries = Object.entries(query ?? {}).filter(([, v]) => v !== undefined)
    if (entries.length)
      url +=
        (url.includes('?') ? '&' : '?') +
        new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()
    return url
  }

  // A path no route matches asks for an impossible second argument: the call does not compile, and the hint names it.
  get<P extends string>(path: P, ...options: Options<'get', P>): Promise<RouteResponse<'get', P>> {
    return this.request('GET', path, options[0] as RequestOptions | undefined)
  }
  post<P extends string>(path: P, ...options: Options<'post', P>): Promise<RouteResponse<'post', P>> {
    return this.request('POST', path, options[0] as RequestOptions | undefined)
  }
  put<P extends string>(path: P, ...options: Options<'put', P>): Promise<RouteResponse<'put', P>> {
    return this.request('PUT', path, options[0] as RequestOptions | undefined)
  }
  patch<P extends string>(path: P, ...options: Options<'patch', P>): Promise<RouteResponse<'patch', P>> {
    return this.request('PATCH', path, options[0] as RequestOptions | undefined)
  }
  delete<P extends string>(path: P, ...options: Options<'delete', P>): Promise<RouteResponse<'delete', P>> {
    return this.request('DELETE', path, options[0] as RequestOptions | undefined)
  }

  /** Any call, untyped: resolves with the JSON body (undefined for 204), or throws ApiError / ConnectionError. */
  async request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const { route, major } = routeKey(method, path)
    const queueKey = `${route}:${major}`
    let mfaHeader: string | undefined
    for (let attempt = 0; ; attempt++) {
      const { response, text } = await this.queued(queueKey, () =>
        this.attempt(method, path, options, route, major, mfaHeader),
      )
      const body = parse(text)
      if (response.ok) {
        if (response.status === 204 || !text) return undefined as T
        if (body === undefined)
          throw new ApiError(
            response.status,
            0,
            'The server answered with a body that is not JSON.',
            undefined,
            undefined,
            method,
            path,
          )
        return body as T
      }
      const error = errorOf(response, body, method, path)
      if (
        response.status === 429 &&
        attempt < this.retries &&
        error.retryAfter !== undefined &&
        error.retryAfter <= this.maxRetryAfter
      ) {
        if (isGlobal(response, body)) this.globalUntil = Date.now() + error.retryAfter * 1000
        await sleep(error.retryAfter * 1000)
        continue
      }
      if (method === 'GET' && [502, 503, 504].includes(response.status) && attempt < Math.min(this.retries, 2)) {
        await sleep(250 * 2 ** attempt)
        continue
      }
      if (error.code === 60003 && error.mfa && !mfaHeader && options.elevate !== false && this.onMfaRequired) {
        const jwt = await this.onMfaRequired(error.mfa)
        if (jwt) {
          mfaHeader = jwt
          continue
        }
      }
      throw error
    }
  }

  /** Run `task` after the calls of the same route and major before it. */
  private async queued<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.queues.get(key) ?? Promise.resolve()
    let release!: () => void
    const mine = new Promise<void>((resolve) => (release = resolve))
    const tail = before.then(() => mine)
    this.queues.set(key, tail)
    await before
    try {
      return await task()
    } finally {
      release()
      if (this.queues.get(key) === tail) this.queues.delete(key)
    }
  }

  /** One request: waits for the global limit and its bucket, sends, reads the body, learns the bucket's headers. */
  private async attempt(
    method: string,
    path: string,
    options: RequestOptions,
    route: string,
    major: string,
    mfaHeader: string | undefined,
  ): Promise<{ response: Response; text: string }> {
    const bucketId = this.routeBuckets.get(route)
    const bucket = bucketId ? this.buckets.get(`${bucketId}:${major}`) : undefined
    const wait = Math.max(
      this.globalUntil - Date.now(),
      bucket && bucket.remaining <= 0 ? bucket.resetAt - Date.now() : 0,
    )
    if (wait > this.maxRetryAfter * 1000) {
      const seconds = Math.ceil(wait / 100) / 10
      throw new ApiError(429, 0, `Rate limited for ${seconds} s more.`, undefined, seconds, method, path)
    }
    if (wait > 0) await sleep(wait)
    if (bucket && bucket.remaining > 0) bucket.remaining -= 1

    const headers: Record<string, string> = { ...options.headers }
    const auth =
      options.auth === false ? undefined : typeof options.auth === 'string' ? options.auth : this.authorization()
    if (auth) headers.authorization = auth
    if (mfaHeader) headers['x-service-mfa-authorization'] = mfaHeader
    let body: string | undefined
    if (options.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(options.form).toString()
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(options.body)
    }
    const timeout = AbortSignal.timeout(this.timeout)
    const signal = options.signal ? anySignal([options.signal, timeout]) : timeout
    let response: Response
    let text: string
    try {
      response = await this.fetcher(this.url(path, options.query), { method, headers, body, signal })
      text = await response.text()
    } catch (cause) {
      const reason = timeout.aborted
        ? `no answer within ${this.timeout} ms`
        : options.signal?.aborted
          ? 'aborted'
          : String((cause as Error)?.message ?? cause)
      throw new ConnectionError(`${method} ${path}: the server could not be reached (${reason}).`, cause)
    }
    this.learn(response.headers, route, major)
    return { response, text }
  }

  /** X-RateLimit-Bucket / Remaining / Reset-After of an answer: what the next call of that route waits for. */
  private learn(headers: Headers, route: string, major: string): void {
    const id = headers.get('x-ratelimit-bucket')
    if (!id) return
    this.routeBuckets.set(route, id)
    const remaining = Number(headers.get('x-ratelimit-remaining'))
    const resetAfter = Number(headers.get('x-ratelimit-reset-after'))
    if (!Number.isFinite(remaining) || !Number.isFinite(resetAfter)) return
    this.buckets.set(`${id}:${major}`, { remaining, resetAt: Date.now() + resetAfter * 1000 })
  }
}

function parse(text: string): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isGlobal(response: Response, body: unknown): boolean {
  return response.headers.get('x-ratelimit-global') === 'true' || (body as { global?: boolean })?.global === true
}

function errorOf(response: Response, body: unknown, method: string, path: string): ApiError {
  const b = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined
  let retryAfter: number | undefined
  if (response.status === 429) {
    const candidates = [
      b?.retry_after,
      response.headers.get('retry-after'),
      response.headers.get('x-ratelimit-reset-after'),
    ]
    for (const c of candidates) {
      const n = Number(c)
      if (c !== null && c !== undefined && Number.isFinite(n) && n >= 0) {
        retryAfter = n
        break
      }
    }
  }
  if (b && typeof b.message === 'string')
    return new ApiError(response.status, Number(b.code ?? 0) || 0, b.message, b, retryAfter, method, path)
  return new ApiError(
    response.status,
    0,
    `${method} ${path}: the server answered ${response.status}${b ? '' : ' without a JSON error body'}.`,
    b,
    retryAfter,
    method,
    path,
  )
}

/** AbortSignal.any where it exists (Node 20.3+, Bun, browsers), else the first to abort of a few. */
function anySignal(signals: AbortSignal[]): AbortSignal {
  const any = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any
  if (any) return any(signals)
  const controller = new AbortController()
  for (const s of signals) s.addEventListener('abort', () => controller.abort(s.reason), { once: true })
  return controller.signal
}

/** The options of a typed call, or, where no route matches, a required argument that names the mistake. */
type Options<M extends Method, P extends string> = [RouteOf<M, P>] extends [never]
  ? [noRouteMatches: `${Uppercase<M>} ${P}`, ...never[]]
  : [options?: Typed<M, P>]

/** The options of a typed call: its body and query as the route declares them. */
export type Typed<M extends Method, P extends string> = Omit<RequestOptions, 'body' | 'query'> & {
  body?: RouteBody<M, P>
  query?: RouteQuery<M, P>
}
export type { Api }
