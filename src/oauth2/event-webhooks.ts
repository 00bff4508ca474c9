// Application event webhooks (Discord's "webhook events"): the application's URL gets each event as a POST of
// `{version: 1, application_id, type: 1, event: {type, timestamp, data}}`, signed as Discord signs interactions:
// `X-Signature-Ed25519` is the application's Ed25519 signature (hex) of `X-Signature-Timestamp` (unix seconds)
// followed by the body; the application checks it with its `verify_key`. A URL is taken only after it answered a
// PING (`type: 0`) with a 2xx (Discord asks for 204). A lobby may send its events to a URL of its own
// (`override_event_webhooks_url`), verified and signed the same way with the application's key. The outbox that
// retries lives with the events' owner (lobbies/event-webhooks.ts).
//
// SSRF: the URL must be http(s), and unless EVENT_WEBHOOKS_ALLOW_PRIVATE is set, every address its host resolves to
// must be public (no loopback, private, link-local, CGNAT, multicast or unspecified addresses), checked when the URL
// is set and before every call; redirects are not followed. (The check and the connection resolve the name
// separately: a name that changes its answer between the two is not caught.)
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { config } from '../config'
import { clock } from '../core/clock'
import { ed25519SignHex } from '../core/crypto'
import { ensureApplicationKeys } from './applications'
import { eventWebhookUrlRefused } from './errors'
import { findApplication, setEventWebhooks } from './store'

/** Discord's statuses; 3: turned off by the server after its URL failed too long (lobbies/event-webhooks.ts). */
export const EventWebhookStatus = { DISABLED: 1, ENABLED: 2, DISABLED_BY_DISCORD: 3 } as const

const BLOCKED = new BlockList()
for (const [range, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(range, bits, 'ipv4')
for (const [range, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(range, bits, 'ipv6')

// BlockList matches an IPv4-mapped IPv6 address (::ffff:10.0.0.1, ::ffff:a00:1) against the IPv4 ranges itself.
function blocked(address: string): boolean {
  return BLOCKED.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4')
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
export async function checkWebhookUrl(raw: string, field?: string): Promise<URL> {
  const problem = webhookUrlProblem(raw)
  if (problem) throw eventWebhookUrlRefused(problem.message, field)
  const url = new URL(raw)
  if (config().eventWebhooksAllowPrivate) return url
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true })).map((a) => a.address)
  } catch {
    throw eventWebhookUrlRefused('Its host does not resolve.', field)
  }
  if (addresses.length === 0 || addresses.some(blocked))
    throw eventWebhookUrlRefused('Its host is a loopback, private or otherwise non-public address.', field)
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

/** POST a signed body to a URL: a 2xx within the timeout is taken. Never throws. */
async function post(url: string, signingKey: string, body: string): Promise<SendResult> {
  try {
    await checkWebhookUrl(url)
    const response = await fetch(url, {
      method: 'POST',
      headers: signedHeaders(signingKey, body),
      body,
      redirect: 'manual',
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
): Promise<SendResult> {
  const app = await findApplication(applicationId)
  if (!app) return { ok: false, error: 'unknown application' }
  if (url) return post(url, (await ensureApplicationKeys(app)).signingKey, body)
  if (!app.eventWebhooksUrl || app.eventWebhooksStatus !== EventWebhookStatus.ENABLED)
    return { ok: false, error: 'event webhooks are not enabled' }
  return post(app.eventWebhooksUrl, (await ensureApplicationKeys(app)).signingKey, body)
}

/**
 * Check a URL for the application's event webhooks (form, then the SSRF guard) and PING it, signed with the
 * application's key: it is good only when it answers 2xx within EVENT_WEBHOOK_TIMEOUT_MS. Returns the URL as
 * checked; otherwise throws a form error naming `field`.
 */
export async function verifyEventWebhooksUrl(applicationId: string, url: string, field?: string): Promise<string> {
  const app = await findApplication(applicationId)
  if (!app) throw eventWebhookUrlRefused('Unknown application.', field)
  const checked = (await checkWebhookUrl(url, field)).toString()
  const ping = JSON.stringify({ version: 1, application_id: app.id, type: 0 })
  const answer = await post(checked, (await ensureApplicationKeys(app)).signingKey, ping)
  if (!answer.ok) throw eventWebhookUrlRefused(`The URL did not acknowledge the PING (${answer.error}).`, field)
  return checked
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
