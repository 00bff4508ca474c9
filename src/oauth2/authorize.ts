// The consent step: check an authorize request (client, response_type, redirect_uri, scopes, PKCE; with the bot scope
// the permissions and the guild) and answer the consent: a code, or the bot added to a guild (install.ts).
import { clock } from '../core/clock'
import { ALL_PERMISSIONS } from '../core/discord'
import { Errors } from '../core/errors'
import { randomToken, sha256Hex } from '../core/crypto'
import { isSnowflake, snowflake } from '../core/snowflake'
import { invalidAuthorizeRequest as invalid } from './errors'
import { INSTALL_SCOPES, parseScopes } from './scopes'
import { findApplication, insertCode } from './store'
import type { ApplicationRow } from './tables'

const CODE_TTL_MS = 10 * 60 * 1000

export type AuthorizeParams = Record<string, string | undefined>

/** What the bot scope asks: the bot's permissions, and a guild to preselect (which `disableGuildSelect` fixes). */
export type BotRequest = { permissions: bigint; guildId?: string; disableGuildSelect: boolean }

export type AuthorizeRequest = {
  app: ApplicationRow
  scopes: string[]
  /** Where the consent sends the browser; none for the bot scope alone without one (Discord's own page then). */
  redirectUri?: string
  redirectUriGiven: boolean
  state?: string
  codeChallenge?: string
  /** A code is issued: every request without the bot scope; with it, scopes beyond it or a response_type. */
  code: boolean
  bot?: BotRequest
}

const CHALLENGE = /^[A-Za-z0-9\-._~]{43,128}$/

export async function checkAuthorizeRequest(q: AuthorizeParams): Promise<AuthorizeRequest> {
  if (!q.client_id) throw invalid('client_id', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_request')
  if (!isSnowflake(q.client_id))
    throw invalid('client_id', 'NUMBER_TYPE_COERCE', `Value "${q.client_id}" is not snowflake.`, 'invalid_request')
  const app = await findApplication(q.client_id)
  if (!app) throw Errors.unknownApplication()

  // The bot flow (Discord's "Bot Authorization Flow"): no response_type nor redirect_uri unless other scopes come
  // with it ("Advanced Bot Authorization"), which make it a code grant again, redirected to the first registered URI
  // when none is named.
  const asked = q.scope?.split(/[\s+]+/) ?? []
  const bot = asked.includes('bot')
  const install = asked.some((s) => INSTALL_SCOPES.includes(s))
  const code = !install || q.response_type !== undefined || asked.some((s) => s && !INSTALL_SCOPES.includes(s))

  // redirect_uri first: until it is known to be registered, nothing may be sent to it.
  let redirectUri = q.redirect_uri
  const redirectUriGiven = redirectUri !== undefined
  if (redirectUri === undefined) {
    if (install && app.redirectUris.length > 0 && code) redirectUri = app.redirectUris[0]
    else if (!install && app.redirectUris.length === 1) redirectUri = app.redirectUris[0]
    else if (code) throw invalid('redirect_uri', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_request')
  } else if (!app.redirectUris.includes(redirectUri)) {
    throw invalid('redirect_uri', 'INVALID_OAUTH2_REDIRECT_URI', 'Invalid OAuth2 redirect_uri', 'invalid_request')
  }

  if (code && q.response_type !== 'code') {
    throw invalid('response_type', 'BASE_TYPE_CHOICES', 'Value must be one of ("code",).', 'unsupported_response_type')
  }
  if (q.scope === undefined || q.scope.trim() === '')
    throw invalid('scope', 'BASE_TYPE_REQUIRED', 'This field is required', 'invalid_scope')
  const scopes = parseScopes(q.scope)
  // applications.commands installs commands with the bot here: the model has no application in a guild without it.
  if (!scopes || (scopes.includes('applications.commands') && !bot))
    throw invalid('scope', 'INVALID_SCOPE', 'Invalid scope', 'invalid_scope')

  if (q.code_challenge !== undefined || q.code_challenge_method !== undefined) {
    if (q.code_challenge === undefined || !CHALLENGE.test(q.code_challenge)) {
      throw invalid('code_challenge', 'BASE_TYPE_INVALID', 'Invalid code_challenge', 'invalid_request')
    }
    // Only S256: "plain" (the RFC 7636 default) would hand the verifier to whoever sees the redirect.
    if (q.code_challenge_method !== 'S256') {
      throw invalid('code_challenge_method', 'BASE_TYPE_CHOICES', 'Value must be one of ("S256",).', 'invalid_request')
    }
  }
  return {
    app,
    scopes,
    redirectUri,
    redirectUriGiven,
    state: q.state,
    codeChallenge: q.code_challenge,
    code,
    bot: bot ? botRequest(q) : undefined,
  }
}

/** The bot scope's parameters: permissions (a bit set Discord knows; none when left out), guild_id, disable_guild_select. */
function botRequest(q: AuthorizeParams): BotRequest {
  const permissions = q.permissions === undefined || q.permissions === '' ? 0n : permissionBits(q.permissions)
  if (permissions === undefined)
    throw invalid('permissions', 'NUMBER_TYPE_COERCE', `Value "${q.permissions}" is not int.`, 'invalid_request')
  if (q.guild_id !== undefined && !isSnowflake(q.guild_id))
    throw invalid('guild_id', 'NUMBER_TYPE_COERCE', `Value "${q.guild_id}" is not snowflake.`, 'invalid_request')
  return { permissions, guildId: q.guild_id, disableGuildSelect: q.disable_guild_select === 'true' }
}

/** A permission bit set as a request sends it (a decimal string); undefined when it is not one Discord knows. */
export function permissionBits(value: unknown): bigint | undefined {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value
  if (typeof text !== 'string' || !/^\d{1,20}$/.test(text)) return undefined
  const bits = BigInt(text)
  return bits & ~ALL_PERMISSIONS ? undefined : bits
}

/** The redirect with `code` (or `error`) and `state` added to the registered URI's own query. */
function redirectTo(uri: string, params: Record<string, string | undefined>): string {
  const url = new URL(uri)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url.toString()
}

/**
 * A code for the consent; with the bot added to a guild, the code remembers the guild (the token answer names it)
 * and the redirect says which and with what permissions, as Discord's.
 */
export async function grantCode(
  request: AuthorizeRequest & { redirectUri: string },
  userId: string,
  installed?: { guildId: string; permissions: bigint },
): Promise<string> {
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
    guildId: installed?.guildId ?? null,
    expiresAt: now + CODE_TTL_MS,
    createdAt: now,
  })
  return redirectTo(request.redirectUri, { code, state: request.state, ...installedParams(installed) })
}

function installedParams(installed?: { guildId: string; permissions: bigint }) {
  return installed ? { guild_id: installed.guildId, permissions: installed.permissions.toString() } : {}
}

/** Where a bot flow without a code goes: the registered URI it named (guild_id, permissions), or our own page. */
export function installedLocation(
  request: AuthorizeRequest,
  installed: { guildId: string; permissions: bigint },
  webUrl: string,
): string {
  if (request.redirectUri)
    return redirectTo(request.redirectUri, { state: request.state, ...installedParams(installed) })
  return `${webUrl}/oauth2/authorized`
}

export function denied(request: AuthorizeRequest, webUrl: string): string {
  if (!request.redirectUri) return `${webUrl}/oauth2/authorized?error=access_denied`
  return redirectTo(request.redirectUri, {
    error: 'access_denied',
    error_description: 'The resource owner or authorization server denied the request',
    state: request.state,
  })
}
