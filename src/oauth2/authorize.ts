// The consent step: check an authorize request (client, response_type, redirect_uri, scopes, PKCE) and issue a code.
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { randomToken, sha256Hex } from '../core/crypto'
import { isSnowflake, snowflake } from '../core/snowflake'
import { invalidAuthorizeRequest as invalid } from './errors'
import { parseScopes } from './scopes'
import { findApplication, insertCode } from './store'
import type { ApplicationRow } from './tables'

const CODE_TTL_MS = 10 * 60 * 1000

export type AuthorizeParams = Record<string, string | undefined>

export type AuthorizeRequest = {
  app: ApplicationRow
  scopes: string[]
  redirectUri: string
  redirectUriGiven: boolean
  state?: string
  codeChallenge?: string
}

const CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/

export async function checkAuthorizeRequest(q: AuthorizeParams): Promise<AuthorizeRequest> {
  if (!q.client_id) throw invalid('client_id', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_request')
  if (!isSnowflake(q.client_id))
    throw invalid('client_id', 'NUMBER_TYPE_COERCE', `Value "${q.client_id}" is not snowflake.`, 'invalid_request')
  const app = await findApplication(q.client_id)
  if (!app) throw Errors.unknownApplication()

  // redirect_uri first: until it is known to be registered, nothing may be sent to it.
  let redirectUri = q.redirect_uri
  const redirectUriGiven = redirectUri !== undefined
  if (redirectUri === undefined) {
    if (app.redirectUris.length !== 1)
      throw invalid('redirect_uri', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_request')
    redirectUri = app.redirectUris[0]
  } else if (!app.redirectUris.includes(redirectUri)) {
    throw invalid('redirect_uri', 'INVALID_OAUTH2_REDIRECT_URI', 'Invalid OAuth2 redirect_uri', 'invalid_request')
  }

  if (q.response_type !== 'code') {
    throw invalid('response_type', 'BASE_TYPE_CHOICES', 'Value must be one of ("code",).', 'unsupported_response_type')
  }
  if (q.scope === undefined || q.scope.trim() === '')
    throw invalid('scope', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_scope')
  const scopes = parseScopes(q.scope)
  if (!scopes) throw invalid('scope', 'INVALID_SCOPE', 'Invalid scope', 'invalid_scope')

  if (q.code_challenge !== undefined || q.code_challenge_method !== undefined) {
    if (q.code_challenge === undefined || !CHALLENGE.test(q.code_challenge)) {
      throw invalid('code_challenge', 'BASE_TYPE_INVALID', 'Invalid code_challenge', 'invalid_request')
    }
    // Only S256: "plain" (the RFC 7636 default) would hand the verifier to whoever sees the redirect.
    if (q.code_challenge_method !== 'S256') {
      throw invalid('code_challenge_method', 'BASE_TYPE_CHOICES', 'Value must be one of ("S256",).', 'invalid_request')
    }
  }
  return { app, scopes, redirectUri, redirectUriGiven, state: q.state, codeChallenge: q.code_challenge }
}

/** The redirect with `code` (or `error`) and `state` added to the registered URI's own query. */
function redirectTo(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}

export async function grantCode(request: AuthorizeRequest, userId: string): Promise<string> {
  const code = randomToken(32)
  const now = clock.now()
  await insertCode({
    codeHash: sha256Hex(code),
    applicationId: request.app.id,
    userId,
    scopes: request.scopes.join(' '),
    redirectUri: request.redirectUri,
    redirectUriGiven: request.redirectUriGiven,
    codeChallenge: request.codeChallenge ?? null,
    familyId: snowflake(),
    expiresAt: now + CODE_TTL_MS,
    createdAt: now,
  })
  return redirectTo(request.redirectUri, { code, state: request.state })
}

export function denied(request: AuthorizeRequest): string {
  return redirectTo(request.redirectUri, {
    error: 'access_denied',
    error_description: 'The resource owner or authorization server denied the request',
    state: request.state,
  })
}
