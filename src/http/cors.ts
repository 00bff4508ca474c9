// CORS for the web client when it is served from another origin than the API (WEB_URL ≠ BASE_URL): requests under
// /api/ from exactly WEB_URL's origin may read the answers, and their preflights are answered. Any other origin gets
// no CORS header (the browser keeps the answer from it); with WEB_URL on the API's own origin nothing is added.
// No credentials: every credential the API takes travels in a header (Authorization, X-Discord-MFA-Authorization),
// which the allowed origin may send; cookies are neither needed nor allowed cross-origin.
import { Elysia } from 'elysia'
import { config } from '../config'

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE'
const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'x-super-properties',
  'x-fingerprint',
  'x-discord-locale',
  'x-discord-timezone',
  'x-debug-options',
  'x-context-properties',
  'x-audit-log-reason',
  'x-service-mfa-authorization',
  'x-discord-mfa-authorization',
  'x-request-id',
].join(', ')
const EXPOSED_HEADERS = [
  'retry-after',
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-ratelimit-reset-after',
  'x-ratelimit-bucket',
  'x-ratelimit-global',
  'x-ratelimit-scope',
].join(', ')
const MAX_AGE = '600'

function originOf(url: string): string {
  return new URL(url).origin
}

let cachedFor: object | undefined
let cached: string | null = null

/** WEB_URL's origin when it differs from BASE_URL's, else null (no CORS). Parsed once per configuration. */
export function corsOrigin(): string | null {
  const cfg = config()
  if (cfg !== cachedFor) {
    cachedFor = cfg
    const web = originOf(cfg.webUrl)
    cached = web === originOf(cfg.baseUrl) ? null : web
  }
  return cached
}

function isApiPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  return url.startsWith('/api/', start)
}

/** The CORS headers of an answer to this request, added to `headers`. */
export function corsHeaders(request: Request, headers: Record<string, string | number>): void {
  const allowed = corsOrigin()
  if (!allowed) return
  const origin = request.headers.get('origin')
  if (origin === null || !isApiPath(request.url)) return
  headers.vary = 'Origin'
  if (origin !== allowed) return
  headers['access-control-allow-origin'] = allowed
  headers['access-control-expose-headers'] = EXPOSED_HEADERS
}

export const cors = new Elysia({ name: 'cors' })
  .onRequest(({ request, set }) => {
    corsHeaders(request, set.headers as Record<string, string | number>)
  })
  // Preflights: the route exists so that they are routed (and logged) like any request.
  .options(
    '/api/*',
    ({ request, set }) => {
      const allowed = corsOrigin()
      if (
        allowed &&
        request.headers.get('origin') === allowed &&
        request.headers.get('access-control-request-method')
      ) {
        set.headers['access-control-allow-methods'] = ALLOWED_METHODS
        set.headers['access-control-allow-headers'] = ALLOWED_HEADERS
        set.headers['access-control-max-age'] = MAX_AGE
      }
      set.status = 204
    },
    { detail: { hide: true } },
  )
  .as('global')
