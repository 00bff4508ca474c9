// The token endpoint's grants: authorization_code (PKCE S256), refresh_token (rotation, reuse revokes the
// family) and client_credentials. Tokens are 256-bit random strings; only their SHA-256 is stored.
import { createHash } from 'node:crypto'
import { clock } from '../core/clock'
import { randomToken, safeEqual, sha256Hex } from '../core/crypto'
import { snowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import type { AuthenticatedClient, FormBody } from './client-auth'
import { ApiError } from '../core/errors'
import { OAuthError } from './errors'
import { mergePort } from './merge-port'
import { INSTALL_SCOPES, parseScopes } from './scopes'
import { installPort } from './install-port'
import { isUserActive } from '../accounts/store'
import { revokeFamily } from './revocation'
import { findCode, findTokenByRefreshHash, insertToken, spendRefreshToken, useCode } from './store'

const ACCESS_TOKEN_SECONDS = 7 * 24 * 3600
const REFRESH_TOKEN_SECONDS = 90 * 24 * 3600

export type TokenResponse = {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token?: string
  scope: string
  /** The guild the bot was added to with the code's consent (Discord's extended bot authorization). */
  guild?: unknown
}

const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

export async function issue(input: {
  applicationId: string
  userId: string
  scopes: string
  familyId: string
  refresh: boolean
  publicClient: boolean
  /** The spent row of a refresh, so spending and issuing commit together. */
  spend?: string
  /** The access token's life, when not the default (a refresh keeps its family's: a provisional account's hour). */
  accessSeconds?: number
  /** The first-party application's token: the user session it belongs to (first-party.ts). */
  sessionId?: string
}): Promise<TokenResponse> {
  const accessSeconds = input.accessSeconds ?? ACCESS_TOKEN_SECONDS
  const accessToken = randomToken(32)
  const refreshToken = input.refresh ? randomToken(32) : undefined
  const now = clock.now()
  await transaction(async (tx) => {
    if (input.spend && !(await spendRefreshToken(tx, input.spend))) throw new RefreshRace()
    await insertToken(tx, {
      id: snowflake(),
      applicationId: input.applicationId,
      userId: input.userId,
      scopes: input.scopes,
      accessTokenHash: sha256Hex(accessToken),
      refreshTokenHash: refreshToken ? sha256Hex(refreshToken) : null,
      familyId: input.familyId,
      expiresAt: now + accessSeconds * 1000,
      refreshExpiresAt: refreshToken ? now + REFRESH_TOKEN_SECONDS * 1000 : null,
      publicClient: input.publicClient,
      createdAt: now,
      sessionId: input.sessionId ?? null,
    })
  })
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: accessSeconds,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scope: input.scopes,
  }
}

class RefreshRace extends Error {}

/** How long the row's access token was issued for, in seconds (at most the default). */
function familyLifetime(row: { expiresAt: number; createdAt: number }): number {
  const seconds = Math.round((row.expiresAt - row.createdAt) / 1000)
  return seconds > 0 && seconds < ACCESS_TOKEN_SECONDS ? seconds : ACCESS_TOKEN_SECONDS
}

const invalidGrant = (what: string) => new OAuthError('invalid_grant', `Invalid "${what}" in request.`)

export async function exchangeCode(client: AuthenticatedClient, form: FormBody): Promise<TokenResponse> {
  if (!form.code) throw new OAuthError('invalid_request', 'Missing "code" in request.')
  const merge = await preparedMerge(client, form)
  const hash = sha256Hex(form.code)
  // The code is spent and its tokens written in one transaction: a crash cannot spend it without a token. A code
  // that fails a check stays spent (the transaction commits the spending, and the error is thrown after).
  const outcome = await transaction(async () => {
    const code = await useCode(hash)
    if (!code) {
      // A replayed code: whatever it bought is revoked (RFC 6749 4.1.2).
      const spent = await findCode(hash)
      if (spent) await revokeFamily(spent.familyId)
      return invalidGrant('code')
    }
    const problem = await codeProblem(client, code, form)
    if (problem) return problem
    if (merge) {
      // Its own savepoint: a refused merge undoes its writes alone, the code stays spent, and no token is issued.
      const refused = await transaction((tx) => merge.run(tx, code.userId)).then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof ApiError) return error
          throw error
        },
      )
      if (refused) return refused
    }
    const tokens = await issue({
      applicationId: code.applicationId,
      userId: code.userId,
      scopes: code.scopes,
      familyId: code.familyId,
      refresh: true,
      publicClient: !client.confidential,
    })
    return { tokens, guildId: code.guildId }
  })
  if (outcome instanceof ApiError) throw outcome
  const guild = outcome.guildId ? await installPort().guild(outcome.guildId) : undefined
  return guild ? { ...outcome.tokens, guild } : outcome.tokens
}

/**
 * The provisional account to merge into the code's user (Discord's merge: `external_auth_type` and
 * `external_auth_token` with the code), its credential checked before the code is spent; undefined without them.
 */
async function preparedMerge(client: AuthenticatedClient, form: FormBody) {
  const type = form.external_auth_type
  const token = form.external_auth_token
  if (type === undefined && token === undefined) return undefined
  if (!type || !token)
    throw new OAuthError('invalid_request', 'Give both "external_auth_type" and "external_auth_token" to merge.')
  const port = mergePort()
  if (!port) throw new OAuthError('invalid_request', 'Merging provisional accounts is not served here.')
  return await port.prepare(client.app.id, type, token)
}

/** Why a just-spent code buys nothing for this client and form, or undefined when it is good. */
async function codeProblem(
  client: AuthenticatedClient,
  code: NonNullable<Awaited<ReturnType<typeof useCode>>>,
  form: FormBody,
): Promise<OAuthError | undefined> {
  if (code.applicationId !== client.app.id || code.expiresAt <= clock.now()) return invalidGrant('code')
  // An account disabled or locked since it consented: the code buys nothing.
  if (!(await isUserActive(code.userId))) return invalidGrant('code')
  const redirect = form.redirect_uri
  if ((code.redirectUriGiven || redirect !== undefined) && redirect !== code.redirectUri)
    return invalidGrant('redirect_uri')
  if (code.codeChallenge) {
    const verifier = form.code_verifier
    if (!verifier || !VERIFIER.test(verifier) || !safeEqual(s256(verifier), code.codeChallenge))
      return invalidGrant('code_verifier')
  } else if (form.code_verifier !== undefined) {
    // No challenge was made: a verifier now means someone downgraded the request.
    return invalidGrant('code_verifier')
  }
  // Without a secret only PKCE ties the code to the client that asked for it.
  if (!client.confidential && !code.codeChallenge) return new OAuthError('invalid_client', 'Invalid client_secret')
  return undefined
}

export async function refresh(client: AuthenticatedClient, form: FormBody): Promise<TokenResponse> {
  if (!form.refresh_token) throw new OAuthError('invalid_request', 'Missing "refresh_token" in request.')
  const row = await findTokenByRefreshHash(sha256Hex(form.refresh_token))
  if (!row || row.applicationId !== client.app.id) throw invalidGrant('refresh_token')
  if (!client.confidential && !row.publicClient) throw new OAuthError('invalid_client', 'Invalid client_secret')
  if (row.refreshUsedAt !== null) {
    // Reuse of a rotated refresh token: someone else holds a copy. End the whole grant.
    await revokeFamily(row.familyId)
    throw invalidGrant('refresh_token')
  }
  if (row.refreshExpiresAt === null || row.refreshExpiresAt <= clock.now()) throw invalidGrant('refresh_token')
  if (!(await isUserActive(row.userId))) throw invalidGrant('refresh_token')
  let scopes = row.scopes
  if (form.scope !== undefined) {
    const asked = parseScopes(form.scope)
    const had = row.scopes.split(' ')
    if (!asked || !asked.every((s) => had.includes(s)))
      throw new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, or malformed.')
    scopes = asked.join(' ')
  }
  try {
    return await issue({
      applicationId: row.applicationId,
      userId: row.userId,
      scopes,
      familyId: row.familyId,
      refresh: true,
      publicClient: row.publicClient,
      spend: row.id,
      // The family's tokens keep the life its first was given (provisional accounts': an hour, issue 44).
      accessSeconds: familyLifetime(row),
    })
  } catch (error) {
    if (!(error instanceof RefreshRace)) throw error
    // Two requests raced with one refresh token: the loser is a reuse.
    await revokeFamily(row.familyId)
    throw invalidGrant('refresh_token')
  }
}

export async function clientCredentials(client: AuthenticatedClient, form: FormBody): Promise<TokenResponse> {
  if (!client.confidential) throw new OAuthError('invalid_client', 'Invalid client_secret')
  const scopes = form.scope === undefined ? ['identify'] : parseScopes(form.scope)
  // The bot's scopes are a consent's (a guild chosen by a person), never the client's own.
  if (!scopes || scopes.some((s) => INSTALL_SCOPES.includes(s)))
    throw new OAuthError('invalid_scope', 'The requested scope is invalid, unknown, or malformed.')
  // Discord issues client-credential tokens for the application's owner; an unowned application acts as its bot.
  return await issue({
    applicationId: client.app.id,
    userId: client.app.ownerId ?? client.app.botUserId,
    scopes: scopes.join(' '),
    familyId: snowflake(),
    refresh: false,
    publicClient: false,
  })
}
