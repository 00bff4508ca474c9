// POST /partner-sdk/token: an external credential for a provisional account's token. The client is the application
// (client_id; client_secret from a game backend, none from a public client: 530007 for a wrong one). OIDC: an ID token
// of a provider the application configured (oidc.ts); DISCORD_BOT_ISSUED_ACCESS_TOKEN: a live token of this
// application's provisional account (from /partner-sdk/token/bot), for the same account; Steam, EOS and Unity need
// their vendors' services, which this server does not call: 530000.
import { clock } from '../core/clock'
import { Errors } from '../core/errors'
import { safeEqual, sha256Hex } from '../core/crypto'
import { findApplication, findTokenByAccessHash } from '../oauth2/store'
import { grantedScopes } from '../oauth2/scopes'
import {
  type ProvisionalTokenAnswer,
  SCOPE,
  tokenForAccount,
  tokenForIdentity,
  usableProvisionalAccount,
} from './accounts'
import { ProvisionalErrors } from './errors'
import { verifyIdToken } from './oidc'
import type { ExchangeSchema } from './schemas'
import { listProviders } from './store'

export async function exchange(body: typeof ExchangeSchema.static): Promise<ProvisionalTokenAnswer> {
  const app = await findApplication(body.client_id)
  // A locked application (`app lock`) is answered as none.
  if (!app || app.lockedAt != null) throw Errors.unknownApplication()
  const secret = body.client_secret
  const confidential = secret !== undefined && secret !== ''
  if (confidential && !safeEqual(sha256Hex(secret), app.clientSecretHash)) throw ProvisionalErrors.badSecret()
  switch (body.external_auth_type) {
    case 'OIDC': {
      const identity = await verifyIdToken(await listProviders(app.id), body.external_auth_token)
      return await tokenForIdentity(
        app.id,
        { applicationId: app.id, kind: 'oidc', issuer: identity.issuer, subject: identity.subject },
        identity.preferredUsername,
        { refresh: confidential },
      )
    }
    case 'DISCORD_BOT_ISSUED_ACCESS_TOKEN': {
      const grant = await findTokenByAccessHash(sha256Hex(body.external_auth_token))
      if (
        !grant ||
        grant.applicationId !== app.id ||
        grant.expiresAt <= clock.now() ||
        !grantedScopes(grant.scopes).includes(SCOPE)
      )
        throw ProvisionalErrors.badAccessToken()
      return await tokenForAccount(app.id, await usableProvisionalAccount(grant.userId), false)
    }
    case 'STEAM_SESSION_TICKET':
      throw ProvisionalErrors.notConfigured("Steam session tickets (they need Steam's Web API)")
    case 'UNITY_SERVICES_ID_TOKEN':
      throw ProvisionalErrors.notConfigured("Unity Services ID tokens (they need Unity's services)")
    default:
      throw ProvisionalErrors.notConfigured("Epic Online Services tokens (they need Epic's services)")
  }
}
