// OAuth2: the consent screen (GET/POST /oauth2/authorize, user token; with the bot scope it adds the application's bot
// to a guild: install.ts), the token endpoints (client authentication, RFC 6749 error bodies) and /oauth2/@me (bearer).
import type { BotCaller } from '../core/caller'
import { Errors } from '../core/errors'
import { NO_CONTENT, SECURITY } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { authorize, optionalCaller } from '../http/identity'
import { config } from '../config'
import { json, noContent } from '../http/respond'
import { cachedUser } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import { checkAuthorizeRequest, type AuthorizeParams } from './authorize'
import { answerConsent, installChoices } from './install'
import { authenticateClient, formFields } from './client-auth'
import { OAuthError, unknownToken } from './errors'
import { clientCredentials, exchangeCode, refresh } from './grants'
import {
  AuthorizeInfoAnswer,
  AuthorizeQuery,
  ConsentSchema,
  CurrentApplicationAnswer,
  FirstPartyTokenAnswer,
  LocationAnswer,
  AuthorizedApps,
  MeAnswer,
  OAuthErrorBody,
  RevokeForm,
  RevokedAnswer,
  TokenAnswer,
  TokenForm,
} from './schemas'
import { currentApplication, publicApplication } from './serialize'
import { revokeAuthorization, revokeFamily } from './revocation'
import {
  countAuthorizedUsers,
  findApplication,
  findTokenByAnyHash,
  findTokenById,
  hasGrant,
  liveGrantsOfUser,
} from './store'
import { ensureApplicationKeys } from './applications'
import { issueFirstPartyToken } from './first-party'
import { sha256Hex } from '../core/crypto'

/** The token endpoints take form bodies and answer RFC 6749's errors; the client authenticates with HTTP Basic or in the form. */
const CLIENT: Record<string, string[]>[] = [{ [SECURITY.client]: [] }, {}]

// RFC 6749 5.1: token responses must not be cached.
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }

/** GET /applications/@me and /oauth2/applications/@me: the calling bot's application (Discord takes only Bot tokens). */
async function ownApplication({ caller }: { caller: BotCaller }) {
  const row = await findApplication(caller.applicationId)
  const bot = row && (await cachedUser(row.botUserId))
  if (!row || !bot) throw Errors.unauthorized()
  const owner = row.ownerId ? await cachedUser(row.ownerId) : undefined
  return currentApplication(await ensureApplicationKeys(row), bot, owner, await countAuthorizedUsers(row.id))
}

/** The consent page (WEB_URL) with the request's query. */
function consentPageRedirect(request: Request): Response {
  const location = `${config().webUrl}/oauth2/authorize${new URL(request.url).search}`
  return new Response(null, { status: 302, headers: { location, 'cache-control': 'no-store' } })
}

/** The authorize request's parameters: the query's string values. */
function authorizeParams(q: Record<string, unknown>): AuthorizeParams {
  const out: AuthorizeParams = {}
  for (const [key, value] of Object.entries(q)) if (typeof value === 'string') out[key] = value
  return out
}

const tag = 'oauth2'

/** The oauth2 domain's endpoints (http/endpoint.ts). */
export const oauth2Endpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/oauth2/authorize',
      // The user token is checked in the handler: a browser following an invite link comes without one.
      auth: null,
      security: [{ [SECURITY.user]: [] }],
      tag,
      summary: 'What an authorization request asks for',
      handlerQuery: AuthorizeQuery,
      answers: {
        200: AuthorizeInfoAnswer,
        302: 'A browser page load without a token (an invite link): sent on to the consent page with the same query',
      },
    },
    async ({ request: http, query }) => {
      const caller = await optionalCaller(http)
      // Invite links name the API's path (discord.js's generateInvite(): <api>/oauth2/authorize?…), and Discord's API
      // host sends a browser on to its consent page; so does this one. An API client keeps its 401.
      if (!caller && !http.headers.get('authorization') && http.headers.get('accept')?.includes('text/html'))
        return consentPageRedirect(http)
      const userId = authorize(caller, 'user').userId
      const request = await checkAuthorizeRequest(authorizeParams(query()))
      const user = await cachedUser(userId)
      if (!user) throw Errors.unauthorized()
      return {
        application: publicApplication(request.app),
        user: publicUser(user),
        authorized: await hasGrant(user.id, request.app.id),
        scopes: request.scopes,
        ...(request.redirectUri !== undefined ? { redirect_uri: request.redirectUri } : {}),
        ...(await installChoices(request, user.id)),
      }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/oauth2/authorize',
      auth: 'user',
      tag,
      summary: 'Approve or deny an authorization request',
      body: ConsentSchema,
      handlerQuery: AuthorizeQuery,
      answers: { 200: LocationAnswer },
    },
    async ({ caller, query, body }) => {
      const request = await checkAuthorizeRequest(authorizeParams(query()))
      return { location: await answerConsent(request, caller.userId, body) }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/oauth2/token',
      auth: null,
      tag,
      summary: 'Exchange a code, a refresh token or client credentials for tokens',
      handlerBody: TokenForm,
      error: OAuthErrorBody,
      security: CLIENT,
      answers: { 200: TokenAnswer },
    },
    async ({ request, body }) => {
      const form = formFields(body)
      const grant = form.grant_type
      if (!grant) throw new OAuthError('invalid_request', 'Missing "grant_type" in request.')
      if (!['authorization_code', 'refresh_token', 'client_credentials'].includes(grant)) {
        throw new OAuthError('unsupported_grant_type', `Unsupported grant type "${grant}".`)
      }
      const client = await authenticateClient(request, form)
      const issued =
        grant === 'authorization_code'
          ? await exchangeCode(client, form)
          : grant === 'refresh_token'
            ? await refresh(client, form)
            : await clientCredentials(client, form)
      return json(issued, 200, NO_STORE)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/oauth2/token/revoke',
      auth: null,
      tag,
      summary: 'Revoke an access or refresh token',
      handlerBody: RevokeForm,
      error: OAuthErrorBody,
      security: CLIENT,
      answers: { 200: RevokedAnswer },
    },
    async ({ request, body }) => {
      const form = formFields(body)
      const client = await authenticateClient(request, form)
      if (!form.token) throw new OAuthError('invalid_request', 'Missing "token" in request.')
      // RFC 7009: unknown or foreign tokens are not an error; revoking either token ends the whole grant.
      const row = await findTokenByAnyHash(sha256Hex(form.token))
      if (row && row.applicationId === client.app.id) await revokeFamily(row.familyId)
      return json({}, 200, NO_STORE)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/oauth2/first-party/token',
      auth: 'user',
      tag,
      summary:
        "The server's web client's Bearer token for this user session (consent implied; it ends with the session's logout)",
      answers: { 200: FirstPartyTokenAnswer },
      limit: { limit: 10, windowMs: 60_000 },
    },
    async ({ caller }) => json(await issueFirstPartyToken(caller), 200, NO_STORE),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/oauth2/tokens',
      auth: 'user',
      tag,
      summary: 'The applications the user authorized (one entry each)',
      answers: { 200: AuthorizedApps },
    },
    async ({ caller }) => {
      const authorized = []
      for (const grant of await liveGrantsOfUser(caller.userId)) {
        const app = await findApplication(grant.applicationId)
        if (app)
          authorized.push({
            id: grant.id,
            scopes: grant.scopes.split(' '),
            application: publicApplication(app),
            ...(app.firstParty ? { first_party: true } : {}),
          })
      }
      return authorized
    },
  ),
  endpoint(
    {
      method: 'DELETE',
      path: '/oauth2/tokens/:tokenId',
      auth: 'user',
      tag,
      summary: "Remove an application's authorization",
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, params }) => {
      // The id of an entry of GET /oauth2/tokens: the application loses every token the user granted it, and its
      // Gateway sessions close (4004). Another user's id, or a stale one, is unknown.
      const grant = await findTokenById(params.tokenId)
      if (!grant || grant.userId !== caller.userId) throw unknownToken()
      await revokeAuthorization(caller.userId, grant.applicationId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/oauth2/@me',
      auth: 'bearer',
      tag,
      summary: 'The current OAuth2 authorization',
      answers: { 200: MeAnswer },
    },
    async ({ caller }) => {
      const app = await findApplication(caller.applicationId)
      const grant = await findTokenById(caller.grantId)
      if (!app || !grant) throw Errors.unauthorized()
      const user = caller.scopes.includes('identify') ? await cachedUser(caller.userId) : undefined
      return {
        application: publicApplication(app),
        scopes: grant.scopes.split(' '),
        expires: new Date(grant.expiresAt).toISOString(),
        ...(user ? { user: publicUser(user) } : {}),
      }
    },
  ),
  endpoint(
    {
      method: 'GET',
      path: '/applications/@me',
      auth: 'bot',
      tag,
      summary: "The calling bot's application",
      answers: { 200: CurrentApplicationAnswer },
    },
    ownApplication,
  ),
  endpoint(
    {
      method: 'GET',
      path: '/oauth2/applications/@me',
      auth: 'bot',
      tag,
      summary: "The calling bot's application (discord.py asks here at login)",
      answers: { 200: CurrentApplicationAnswer },
    },
    ownApplication,
  ),
]
