// Application event webhooks (Discord's "webhook events"): the application's URL gets each event as a POST of
// `{version: 1, application_id, type: 1, event: {type, timestamp, data}}`, signed as Discord signs interactions:
// `X-Signature-Ed25519` is the application's Ed25519 signature (hex) of `X-Signature-Timestamp` (unix seconds)
// followed by the body; the application checks it with its `verify_key`. A URL is taken only after it answered a
// PING (`type: 0`) with a 2xx (Discord asks for 204). A lobby may send its events to a URL of its own
// (`override_event_webhooks_url`), verified and signed the same way with the application's key. The outbox that
// retries lives with the events' owner (lobbies/event-webhooks.ts).
//
// SSRF: the URL must be http(s), and unless EVENT_WEBHOOKS_ALLOW_PRIVATE is set, every address its host resolves to
// must be public (public-address.ts says which are: no loopback, private, link-local, CGNAT, multicast, unspecified
// or reserved address, in IPv4 or in any IPv6 form that carries one), checked when the URL is set and before every
// call; redirects are not followed. A call connects to the address it checked: the name is resolved once per call and
// the request goes to that address, with the name as Host and as the TLS server name, so a name that answers a public
// address to the check and a private one to the connection (DNS rebinding) cannot reach the private one.
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { config } from '../config'
import { clock } from '../core/clock'
import { ed25519SignHex } from '../core/crypto'
import { ensureApplicationKeys } from './applications'
import { eventWebhookUrlRefused } from './errors'
import { isPublicAddress } from './public-address'
import { findApplication, setEventWebhooks } from './store'

/** Discord's statuses; 3: turned off by the server after its URL failed too long (lobbies/event-webhooks.ts). */
export const EventWebhookStatus = { DISABLED: 1, ENABLED: 2, DISABLED_BY_DISCORD: 3 } as const

/** A host name's addresses, all of them. The system's resolver here; tests pass their own. */
export type Resolver = (host: string) => Promise<string[]>
export const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)

const NOT_PUBLIC = 'Its host is a loopback, private or otherwise non-public address.'

/** The address to connect to for a URL (its host resolved once, every answer public), or why there is none. */
async function addressOf(url: URL, resolve: Resolver): Promise<{ address: string } | { refused: string }> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : await resolve(host)
  } catch {
    return { refused: 'Its host does not resolve.' }
  }
  if (addresses.length === 0) return { refused: 'Its host does not resolve.' }
  if (!config().eventWebhooksAllowPrivate && !addresses.every(isPublicAddress)) return { refused: NOT_PUBLIC }
  return { address: addresses[0] }
}

/** What is wrong with a URL's form (not a URL, not http(s), credentials in it), or undefined. No lookup. */
export function webhookUrlProblem(raw: string): { code: string; message: string } | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return {
      code: 'URL_TYPE_INVALID_SCHEME',
      message: `Scheme "${url.protocol.slice(0, -1).slice(0, 32)}" is not supported. Scheme must be one of ('http', 'https').`,
    }
  if (url.username || url.password) return { code: 'BASE_TYPE_INVALID', message: 'Must not carry credentials.' }
  return undefined
}

/** The URL as this server will call it, or the reason it will not (a form error naming `field`). */
export async function checkWebhookUrl(raw: string, field?: string, resolve = systemResolver): Promise<URL> {
  const problem = webhookUrlProblem(raw)
  if (problem) throw eventWebhookUrlRefused(problem.message, field)
  const url = new URL(raw)
  const target = await addressOf(url, resolve)
  if ('refused' in target) throw eventWebhookUrlRefused(target.refused, field)
  return url
}

/** Sign a body as Discord signs webhook events and interactions. */
export function signedHeaders(signingKey: string, body: string, now = clock.now()): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000))
  return {
    'content-type': 'application/json',
    'user-agent': 'lobby-server event webhooks',
    'x-signature-ed25519': ed25519SignHex(signingKey, timestamp + body),
    'x-signature-timestamp': timestamp,
  }
}

export type SendResult = { ok: true } | { ok: false; error: string }

/**
 * POST a signed body to a URL, at the address its host resolves to now (checked): a 2xx within the timeout is taken.
 * Never throws.
 */
async function post(raw: string, signingKey: string, body: string, resolve: Resolver): Promise<SendResult> {
  try {
    const problem = webhookUrlProblem(raw)
    if (problem) return { ok: false, error: problem.message }
    const url = new URL(raw)
    const target = await addressOf(url, resolve)
    if ('refused' in target) return { ok: false, error: target.refused }
    // The request names the checked address; the name goes in Host and, for https, is the TLS server name (SNI and
    // the name the certificate must carry), on a connection of its own: a pooled one to the same address may have
    // been verified for another name. (An http connection is pooled by address, which was checked.)
    const pinned = new URL(url)
    const named = !isIP(url.hostname.replace(/^\[|\]$/g, ''))
    if (named) pinned.hostname = isIP(target.address) === 6 ? `[${target.address}]` : target.address
    const tls = named && url.protocol === 'https:'
    const response = await fetch(pinned, {
      method: 'POST',
      headers: { ...signedHeaders(signingKey, body), host: url.host },
      body,
      redirect: 'manual',
      keepalive: !tls,
      ...(tls ? { tls: { serverName: url.hostname } } : {}),
      signal: AbortSignal.timeout(config().eventWebhookTimeoutMs),
    })
    await response.arrayBuffer().catch(() => undefined)
    return response.status >= 200 && response.status < 300
      ? { ok: true }
      : { ok: false, error: `HTTP ${response.status}` }
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message.slice(0, 200) : 'failed' }
  }
}

/**
 * Send one event envelope (JSON text), signed with the application's key, to `url` (a lobby's override) or else to
 * the application's current URL.
 */
export async function sendApplicationEvent(
  applicationId: string,
  body: string,
  url?: string | null,
  resolve = systemResolver,
): Promise<SendResult> {
  const app = await findApplication(applicationId)
  if (!app) return { ok: false, error: 'unknown application' }
  if (url) return post(url, (await ensureApplicationKeys(app)).signingKey, body, resolve)
  if (!app.eventWebhooksUrl || app.eventWebhooksStatus !== EventWebhookStatus.ENABLED)
    return { ok: false, error: 'event webhooks are not enabled' }
  return post(app.eventWebhooksUrl, (await ensureApplicationKeys(app)).signingKey, body, resolve)
}

/**
 * Check a URL for the application's event webhooks (form, then the SSRF guard) and PING it, signed with the
 * application's key: it is good only when it answers 2xx within EVENT_WEBHOOK_TIMEOUT_MS. Returns the URL as
 * checked; otherwise throws a form error naming `field`.
 */
export async function verifyEventWebhooksUrl(
  applicationId: string,
  url: string,
  field?: string,
  resolve = systemResolver,
): Promise<string> {
  const app = await findApplication(applicationId)
  if (!app) throw eventWebhookUrlRefused('Unknown application.', field)
  const checked = (await checkWebhookUrl(url, field, resolve)).toString()
  const ping = JSON.stringify({ version: 1, application_id: app.id, type: 0 })
  const answer = await post(checked, (await ensureApplicationKeys(app)).signingKey, ping, resolve)
  if (!answer.ok) throw eventWebhookUrlRefused(`The URL did not acknowledge the PING (${answer.error}).`, field)
  return checked
}

/**
 * PING the application's event webhooks URL as it is set now (the console's test button): what it answered and how
 * long it took. Nothing changes (a failing URL stays set; the outbox's stop rule decides about it).
 */
export async function pingEventWebhooks(
  applicationId: string,
  resolve = systemResolver,
): Promise<SendResult & { url: string | null; latency_ms: number }> {
  const app = await findApplication(applicationId)
  if (!app?.eventWebhooksUrl) return { ok: false, error: 'no event webhooks URL is set', url: null, latency_ms: 0 }
  const ping = JSON.stringify({ version: 1, application_id: app.id, type: 0 })
  const started = performance.now()
  const answer = await post(app.eventWebhooksUrl, (await ensureApplicationKeys(app)).signingKey, ping, resolve)
  return { ...answer, url: app.eventWebhooksUrl, latency_ms: Math.round(performance.now() - started) }
}

/**
 * Set (or, with null, turn off) the application's event webhooks URL. A URL is PINGed first, signed with the
 * application's key, and taken only when it answers 2xx; otherwise nothing changes and the reason is thrown.
 */
export async function setEventWebhooksUrl(applicationId: string, url: string | null): Promise<void> {
  if (!(await findApplication(applicationId))) throw eventWebhookUrlRefused('Unknown application.')
  if (url === null) {
    await setEventWebhooks(applicationId, null, EventWebhookStatus.DISABLED)
    return
  }
  await setEventWebhooks(applicationId, await verifyEventWebhooksUrl(applicationId, url), EventWebhookStatus.ENABLED)
}
