// OAuth2: the consent screen (GET/POST /oauth2/authorize, user token), the token endpoints (client authentication,
// RFC 6749 error bodies) and /oauth2/@me (bearer).
import { Elysia } from 'elysia'
import type { Caller } from '../core/caller'
import { Errors } from '../core/errors'
import { doc, NO_CONTENT, SECURITY } from '../http/docs'
import { identity } from '../http/identity'
import { json, noContent } from '../http/respond'
import { findUser } from '../accounts/store'
import { publicUser } from '../accounts/serialize'
import { checkAuthorizeRequest, denied, grantCode, type AuthorizeParams } from './authorize'
import { authenticateClient, formFields } from './client-auth'
import { OAuthError, unknownToken } from './errors'
import { clientCredentials, exchangeCode, refresh } from './grants'
import {
  AuthorizeInfoAnswer,
  AuthorizeQuery,
  ConsentSchema,
  CurrentApplicationAnswer,
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
import { sha256Hex } from '../core/crypto'

/** The token endpoints take form bodies and answer RFC 6749's errors; the client authenticates with HTTP Basic or in the form. */
const CLIENT: Record<string, string[]>[] = [{ [SECURITY.client]: [] }, {}]
const FORM = { body: TokenForm, error: OAuthErrorBody, security: CLIENT }

// RFC 6749 5.1: token responses must not be cached.
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' }

/** GET /applications/@me and /oauth2/applications/@me: the calling bot's application (Discord takes only Bot tokens). */
async function ownApplication({ caller }: { caller: Caller }) {
  if (caller.kind !== 'bot') throw Errors.unauthorized()
  const row = await findApplication(caller.applicationId)
  const bot = row && (await findUser(row.botUserId))
  if (!row || !bot) throw Errors.unauthorized()
  const owner = row.ownerId ? await findUser(row.ownerId) : undefined
  return currentApplication(await ensureApplicationKeys(row), bot, owner, await countAuthorizedUsers(row.id))
}

function query(q: Record<string, unknown>): AuthorizeParams {
  const out: AuthorizeParams = {}
  for (const [key, value] of Object.entries(q)) if (typeof value === 'string') out[key] = value
  return out
}

export const oauth2Routes = new Elysia()
  .use(identity)
  .get(
    '/oauth2/authorize',
    async ({ caller, query: q }) => {
      const request = await checkAuthorizeRequest(query(q))
      const user = await findUser(caller.userId)
      if (!user) throw Errors.unauthorized()
      return {
        application: publicApplication(request.app),
        user: publicUser(user),
        authorized: await hasGrant(user.id, request.app.id),
        scopes: request.scopes,
        redirect_uri: request.redirectUri,
      }
    },
    {
      user: true,
      ...doc(
        'oauth2',
        'What an authorization request asks for',
        { 200: AuthorizeInfoAnswer },
        { query: AuthorizeQuery },
      ),
    },
  )
  .post(
    '/oauth2/authorize',
    async ({ caller, query: q, body }) => {
      const request = await checkAuthorizeRequest(query(q))
      if (!body.authorize) return { location: denied(request) }
      return { location: await grantCode(request, caller.userId) }
    },
    {
      user: true,
      body: ConsentSchema,
      ...doc('oauth2', 'Approve or deny an authorization request', { 200: LocationAnswer }, { query: AuthorizeQuery }),
    },
  )
  .post(
    '/oauth2/token',
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
    doc('oauth2', 'Exchange a code, a refresh token or client credentials for tokens', { 200: TokenAnswer }, FORM),
  )
  .post(
    '/oauth2/token/revoke',
    async ({ request, body }) => {
      const form = formFields(body)
      const client = await authenticateClient(request, form)
      if (!form.token) throw new OAuthError('invalid_request', 'Missing "token" in request.')
      // RFC 7009: unknown or foreign tokens are not an error; revoking either token ends the whole grant.
      const row = await findTokenByAnyHash(sha256Hex(form.token))
      if (row && row.applicationId === client.app.id) await revokeFamily(row.familyId)
      return json({}, 200, NO_STORE)
    },
    doc('oauth2', 'Revoke an access or refresh token', { 200: RevokedAnswer }, { ...FORM, body: RevokeForm }),
  )
  .get(
    '/oauth2/tokens',
    async ({ caller }) => {
      const authorized = []
      for (const grant of await liveGrantsOfUser(caller.userId)) {
        const app = await findApplication(grant.applicationId)
        if (app) authorized.push({ id: grant.id, scopes: grant.scopes.split(' '), application: publicApplication(app) })
      }
      return authorized
    },
    { user: true, ...doc('oauth2', 'The applications the user authorized (one entry each)', { 200: AuthorizedApps }) },
  )
  .delete(
    '/oauth2/tokens/:tokenId',
    async ({ caller, params }) => {
      // The id of an entry of GET /oauth2/tokens: the application loses every token the user granted it, and its
      // Gateway sessions close (4004). Another user's id, or a stale one, is unknown.
      const grant = await findTokenById(params.tokenId)
      if (!grant || grant.userId !== caller.userId) throw unknownToken()
      await revokeAuthorization(caller.userId, grant.applicationId)
      return noContent()
    },
    { user: true, ...doc('oauth2', "Remove an application's authorization", { 204: NO_CONTENT }) },
  )
  .get(
    '/oauth2/@me',
    async ({ caller }) => {
      if (caller.kind !== 'bearer') throw Errors.unauthorized()
      const app = await findApplication(caller.applicationId)
      const grant = await findTokenById(caller.grantId)
      if (!app || !grant) throw Errors.unauthorized()
      const user = caller.scopes.includes('identify') ? await findUser(caller.userId) : undefined
      return {
        application: publicApplication(app),
        scopes: grant.scopes.split(' '),
        expires: new Date(grant.expiresAt).toISOString(),
        ...(user ? { user: publicUser(user) } : {}),
      }
    },
    { auth: 'bearer', ...doc('oauth2', 'The current OAuth2 authorization', { 200: MeAnswer }) },
  )
  .get('/applications/@me', ownApplication, {
    auth: 'bot',
    ...doc('oauth2', "The calling bot's application", { 200: CurrentApplicationAnswer }),
  })
  .get('/oauth2/applications/@me', ownApplication, {
    auth: 'bot',
    ...doc('oauth2', "The calling bot's application (discord.py asks here at login)", {
      200: CurrentApplicationAnswer,
    }),
  })
