// The web client at WEB_URL: the pages a person uses (login, registration, the e-mailed links, OAuth2 consent,
// security settings), served from the same process with security headers. The API stays under /api/...
import { Elysia } from 'elysia'
import { type Config, config } from '../config'
import { Errors } from '../core/errors'
import { log } from '../core/log'
import { registry } from '../mfa/factors'
import { clientPage, escapeHtml, FAVICON_SVG, type Message, messagePage, stylesheetOf } from './shell'
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

/** The CSP of a page: PAGE_CSP, with the operator's logo allowed as an image when it lives elsewhere. */
function pageCsp(cfg: Config): string {
  if (!cfg.logoUrl) return PAGE_CSP
  return PAGE_CSP.replace("img-src 'self' data:", `img-src 'self' data: ${new URL(cfg.logoUrl).origin}`)
}

const pageHeaders = (cfg: Config): Record<string, string> => ({
  'content-type': HTML,
  'content-security-policy': pageCsp(cfg),
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cross-origin-opener-policy': 'same-origin',
  // Pages are small and may carry a token in their URL: never kept by a cache.
  'cache-control': 'no-store',
})

const HTML = 'text/html;charset=utf-8'

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
  ['/app', 'home'],
  // The operator console (admin/ is its API): its own login step, then the operator's sections.
  ['/console', 'console'],
  ['/console/*', 'console'],
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

/**
 * How the pages ask for each MFA method (its label, the kind of input, whether a code is sent), from the registry of
 * second factors (mfa/factor.ts PagePrompt): read by pages/lib/factor-form.ts from a meta tag (the CSP allows no inline script).
 */
const MFA_METHODS = `<meta name="mfa-methods" content="${escapeHtml(
  JSON.stringify(registry.methods.map((m) => ({ type: m.type, ...m.page }))),
)}">`

/** Pages with the settings in, per configuration (a new one only when the configuration changes: tests). */
const branded = new WeakMap<Config, Map<string, string>>()

async function page(name: PageName): Promise<Response> {
  const cfg = config()
  let pages = branded.get(cfg)
  if (!pages) branded.set(cfg, (pages = new Map()))
  let html = pages.get(name)
  if (html === undefined) {
    const built = (await site()).pages.get(name)
    if (built === undefined) throw Errors.notFound()
    pages.set(name, (html = clientPage(built, cfg).replace('</head>', `${MFA_METHODS}</head>`)))
  }
  return new Response(html, { headers: { ...pageHeaders(cfg), 'permissions-policy': PERMISSIONS(name === 'lobby') } })
}

/** One of the server's own pages (no script), with a page's stylesheet. */
async function message(status: number, body: Message, headers: Record<string, string> = {}): Promise<Response> {
  const cfg = config()
  const stylesheet = stylesheetOf((await site()).pages.get('login') ?? '')
  return new Response(messagePage(cfg, stylesheet, body), {
    status,
    headers: { ...pageHeaders(cfg), 'permissions-policy': PERMISSIONS(false), ...headers },
  })
}

/**
 * A form submitted without the page's script (scripts blocked or not loaded): the forms are method="post", so the
 * fields (a password) travel in the body, never in the URL; this answer never reads that body, and says why.
 */
function needsJavaScript(path: string): Promise<Response> {
  return message(
    405,
    {
      title: 'JavaScript needed',
      heading: 'This page needs JavaScript',
      text: 'Nothing was sent or saved. Turn JavaScript on for this site (or let its scripts load), then try again.',
      link: { href: path, label: 'Back to the page' },
    },
    { allow: 'GET, HEAD' },
  )
}

/** A browser asking for a page that is not there gets a page saying so; API clients keep Discord's JSON 404. */
export function notFoundPage(request: Request): Promise<Response> | undefined {
  if (request.method !== 'GET' && request.method !== 'HEAD') return undefined
  if (!request.headers.get('accept')?.includes('text/html')) return undefined
  const path = new URL(request.url).pathname
  if (path === '/api' || path.startsWith('/api/')) return undefined
  return message(404, {
    title: 'Page not found',
    heading: 'Page not found',
    text: 'There is no page at this address. Check the link, or start from the login page.',
    link: { href: '/login', label: 'Go to the login page' },
  })
}

/** Scripts and styles by their hashed paths: cached for good. Anything else keeps the API's JSON 404. */
async function asset(path: string): Promise<Response> {
  const file = (await site()).assets.get(path)
  if (!file) throw Errors.notFound()
  return respond(file, { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' })
}

const hidden = { detail: { hide: true } }

const favicon = () =>
  new Response(FAVICON_SVG, {
    headers: {
      'content-type': 'image/svg+xml',
      'cache-control': 'public, max-age=86400',
      'x-content-type-options': 'nosniff',
    },
  })

/**
 * Where the bot scope's consent ends when the request named no redirect URI (Discord's own /oauth2/authorized page):
 * the bot was added, or the person cancelled (`error`, never shown back).
 */
function authorizedPage(query: Record<string, string | undefined>): Promise<Response> {
  return message(
    200,
    query.error
      ? {
          title: 'Authorization cancelled',
          heading: 'Cancelled',
          text: 'Nothing was added. You may close this page.',
          link: { href: '/settings/security', label: 'Go to your account' },
        }
      : {
          title: 'Authorized',
          heading: 'Authorized',
          text: 'The application was added to the server you chose. You may close this page.',
          link: { href: '/settings/security', label: 'Go to your account' },
        },
  )
}

export const webRoutes = new Elysia({ name: 'web' })
  .get('/', () => new Response(null, { status: 302, headers: { location: '/app' } }), hidden)
  .get('/oauth2/authorized', ({ query }) => authorizedPage(query), hidden)
  .get('/favicon.svg', favicon, hidden)
  .get('/favicon.ico', favicon, hidden)
  // From source (Bun.build with publicPath /assets/).
  .get(`${ASSETS}:file`, ({ params }) => asset(`${ASSETS}${params.file}`), hidden)

// In the compiled binary: each script and style at the exact path its bundle names it by (site.ts).
for (const path of embeddedPaths()) webRoutes.get(path, () => asset(path), hidden)
for (const [path, name] of PAGE_ROUTES) {
  webRoutes.get(path, () => page(name), hidden)
  // The body is never read (module.ts leaves it unread): it holds what the form held.
  webRoutes.post(path, ({ path: at }) => needsJavaScript(at), hidden)
}
