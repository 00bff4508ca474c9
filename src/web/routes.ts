// The web client at WEB_URL: the pages a person uses (login, registration, the e-mailed links, OAuth2 consent,
// security settings), served from the same process with security headers. The API stays under /api/...
import { Elysia } from 'elysia'
import { Errors } from '../core/errors'
import { log } from '../core/log'
import { ASSETS, embeddedPaths, loadSite, type PageName, type WebFile } from './site'

/** No inline script or style, nothing from elsewhere, never framed (login and consent are click-jacking targets). */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ')

/**
 * Powerful features the pages never use are off; the microphone is for the lobby page (its call) alone. WebAuthn
 * (publickey-credentials-*) keeps its default: this origin only.
 */
const PERMISSIONS = (microphone: boolean) =>
  `camera=(), geolocation=(), microphone=(${microphone ? 'self' : ''}), payment=(), usb=()`

const PAGE_HEADERS: Record<string, string> = {
  'content-security-policy': PAGE_CSP,
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  // Pages are small and may carry a token in their URL: never kept by a cache.
  'cache-control': 'no-store',
}

/** Page paths; the route patterns (not the paths) reach the access log, so /wasntme/<token> logs as /wasntme/*. */
export const PAGE_ROUTES: [path: string, page: PageName][] = [
  ['/login', 'login'],
  ['/register', 'register'],
  ['/verify', 'verify'],
  ['/authorize-ip', 'authorize-ip'],
  ['/reset', 'reset'],
  ['/wasntme', 'wasntme'],
  ['/wasntme/*', 'wasntme'],
  ['/oauth2/authorize', 'authorize'],
  ['/settings/security', 'security'],
  ['/ra/*', 'ra'],
  ['/lobbies/*', 'lobby'],
]

function respond(file: WebFile, headers: Record<string, string>): Response {
  return new Response(file.body, { headers: { 'content-type': file.type, ...headers } })
}

/** The pages and assets, or a plain 500 logged here without the request path (it may hold a /wasntme token). */
async function site() {
  try {
    return await loadSite()
  } catch (error) {
    log.error('web pages unavailable', { error: String((error as Error)?.stack ?? error) })
    throw Errors.internal()
  }
}

async function page(name: PageName): Promise<Response> {
  const file = (await site()).pages.get(name)
  if (!file) throw Errors.notFound()
  return respond(file, { ...PAGE_HEADERS, 'permissions-policy': PERMISSIONS(name === 'lobby') })
}

/** Scripts and styles by their hashed paths: cached for good. Anything else keeps the API's JSON 404. */
async function asset(path: string): Promise<Response> {
  const file = (await site()).assets.get(path)
  if (!file) throw Errors.notFound()
  return respond(file, { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' })
}

const hidden = { detail: { hide: true } }

export const webRoutes = new Elysia({ name: 'web' })
  .get('/', () => new Response(null, { status: 302, headers: { location: '/login' } }), hidden)
  // From source (Bun.build with publicPath /assets/).
  .get(`${ASSETS}:file`, ({ params }) => asset(`${ASSETS}${params.file}`), hidden)

// In the compiled binary: each script and style at the exact path its bundle names it by (site.ts).
for (const path of embeddedPaths()) webRoutes.get(path, () => asset(path), hidden)
for (const [path, name] of PAGE_ROUTES) webRoutes.get(path, () => page(name), hidden)
