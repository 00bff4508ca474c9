// GET of an identity provider's JSON (its discovery document, its JWKS) under the event webhooks' SSRF guard: http(s)
// only, no credentials in the URL, every address the host resolves to public unless EXTERNAL_AUTH_ALLOW_PRIVATE, the
// connection pinned to the address checked (no DNS rebinding), no redirect followed, the time-out bounded, the body
// at most 512 KiB.
import { isIP } from 'node:net'
import { config } from '../config'
import { isPublicAddress } from '../oauth2/public-address'
import { type Resolver, systemResolver, webhookUrlProblem } from '../oauth2/event-webhooks'

const MAX_BYTES = 512 * 1024

/** Why a fetch gave nothing usable; never carries a token or a secret (the URLs are the issuer's public ones). */
export class FetchFailed extends Error {}

/** The JSON at `raw`, or FetchFailed; `timeoutMs` bounds the whole call (resolution, connection, body). */
export async function fetchJson(raw: string, timeoutMs: number, resolve: Resolver = systemResolver): Promise<unknown> {
  if (webhookUrlProblem(raw)) throw new FetchFailed('not an http(s) URL')
  const url = new URL(raw)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const signal = AbortSignal.timeout(timeoutMs)
  let addresses: string[]
  try {
    addresses = isIP(host) ? [host] : await Promise.race([resolve(host), aborted(signal)])
  } catch {
    throw new FetchFailed('its host does not resolve')
  }
  if (addresses.length === 0) throw new FetchFailed('its host does not resolve')
  if (!config().externalAuthAllowPrivate && !addresses.every(isPublicAddress))
    throw new FetchFailed('its host is not a public address')
  const pinned = new URL(url)
  const named = !isIP(host)
  if (named) pinned.hostname = isIP(addresses[0]) === 6 ? `[${addresses[0]}]` : addresses[0]
  const tls = named && url.protocol === 'https:'
  try {
    const response = await fetch(pinned, {
      headers: { accept: 'application/json', host: url.host, 'user-agent': 'lobby-server external auth' },
      redirect: 'manual',
      keepalive: !tls,
      ...(tls ? { tls: { serverName: url.hostname } } : {}),
      signal,
    })
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined)
      throw new FetchFailed(`HTTP ${response.status}`)
    }
    if (Number(response.headers.get('content-length') ?? 0) > MAX_BYTES) throw new FetchFailed('too large')
    const text = await response.text()
    if (text.length > MAX_BYTES) throw new FetchFailed('too large')
    return JSON.parse(text)
  } catch (error) {
    if (error instanceof FetchFailed) throw error
    throw new FetchFailed(error instanceof Error ? error.name : 'failed')
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
}
