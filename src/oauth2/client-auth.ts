// Client authentication at the token endpoints: HTTP Basic (RFC 6749 2.3.1) or client_id/client_secret in the body.
import { safeEqual, sha256Hex } from '../core/crypto'
import { isSnowflake } from '../core/snowflake'
import { OAuthError } from './errors'
import { findApplication } from './store'
import type { ApplicationRow } from './tables'

export type AuthenticatedClient = {
  app: ApplicationRow
  /** false: only client_id was given (a public client; allowed where PKCE stands in for the secret). */
  confidential: boolean
}

export type FormBody = Record<string, string | undefined>

/** Form fields as strings; repeated or non-string fields count as absent (RFC 6749 3.2: no repeats). */
export function formFields(body: unknown): FormBody {
  // Keys come from the client: no prototype to write through.
  const out: FormBody = Object.create(null)
  if (!body || typeof body !== 'object') return out
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string') out[key] = value
  }
  return out
}

function basicCredentials(header: string | null): { id: string; secret: string } | undefined {
  const match = /^basic\s+(.+)$/i.exec(header?.trim() ?? '')
  if (!match) return undefined
  const decoded = Buffer.from(match[1], 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

export async function authenticateClient(request: Request, form: FormBody): Promise<AuthenticatedClient> {
  const header = request.headers.get('authorization')
  const basic = basicCredentials(header)
  const usedBasic = /^basic\s/i.test(header?.trim() ?? '')
  const fail = (description: string) =>
    new OAuthError(
      'invalid_client',
      description,
      401,
      usedBasic ? { 'WWW-Authenticate': 'Basic realm="oauth2"' } : undefined,
    )
  if (usedBasic && !basic) throw fail('Invalid client authentication')
  if (basic && form.client_secret !== undefined)
    throw new OAuthError('invalid_request', 'Use only one client authentication method')
  const clientId = basic?.id ?? form.client_id
  const secret = basic?.secret ?? form.client_secret
  if (basic && form.client_id !== undefined && form.client_id !== basic.id) throw fail('client_id does not match')
  if (!clientId || !isSnowflake(clientId)) throw fail('Invalid client_id')
  const found = await findApplication(clientId)
  // A locked application (`app lock`) is no client.
  const app = found?.lockedAt == null ? found : undefined
  // Compare against a dummy when the application is unknown so timing says nothing either way.
  const expected = app?.clientSecretHash ?? sha256Hex('no-such-client')
  if (secret === undefined || secret === '') {
    if (!app) throw fail('Invalid client_id')
    return { app, confidential: false }
  }
  const ok = safeEqual(sha256Hex(secret), expected)
  if (!app || !ok) throw fail('Invalid client_secret')
  return { app, confidential: true }
}
