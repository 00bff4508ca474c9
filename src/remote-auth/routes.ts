// Remote (QR) login over REST (spec §4.10, WIRE.md §3): the mobile user's create / finish / cancel, and the desktop's
// unauthenticated ticket exchange. The desktop's socket is socket.ts. The limits here protect accounts (per user,
// across the three mobile routes; per address for the exchange), apart from the routes' own pacing (http/rate-limits).
import { consume, perIp, reserve } from '../core/ratelimit'
import { clientIp } from '../http/client-ip'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { noContent } from '../http/respond'
import { LOGIN_REQUESTS, MOBILE_REQUESTS } from './limits'
import { cancelRemoteAuth, claimRemoteAuth, exchangeTicket, finishRemoteAuth } from './mobile'
import { CancelSchema, EncryptedTokenAnswer, FinishSchema, HandshakeAnswer, LoginSchema, StartSchema } from './schemas'

const BUCKET = 'remote-auth-user'
const tag = 'remote-auth'

/** The remote-auth domain's REST endpoints (http/endpoint.ts). */
export const remoteAuthEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/remote-auth',
      auth: 'user',
      tag,
      summary: 'Claim a desktop remote-auth session by its fingerprint',
      body: StartSchema,
      answers: { 200: HandshakeAnswer },
    },
    async ({ caller, body }) => {
      await consume(BUCKET, caller.userId, MOBILE_REQUESTS)
      return claimRemoteAuth(caller, body.fingerprint)
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/remote-auth/finish',
      auth: 'user',
      tag,
      summary: 'Accept: the desktop receives a login ticket (MFA users: elevated)',
      body: FinishSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, body, request }) => {
      await consume(BUCKET, caller.userId, MOBILE_REQUESTS)
      await finishRemoteAuth(caller, body.handshake_token, body.temporary_token, request)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/remote-auth/cancel',
      auth: 'user',
      tag,
      summary: 'Deny: the desktop receives cancel',
      body: CancelSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller, body }) => {
      await consume(BUCKET, caller.userId, MOBILE_REQUESTS)
      await cancelRemoteAuth(caller, body.handshake_token)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/remote-auth/login',
      auth: null,
      tag,
      summary: 'Desktop: exchange the ticket for a token encrypted to its key',
      body: LoginSchema,
      answers: { 200: EncryptedTokenAnswer },
    },
    async ({ request, server, body }) => {
      await reserve(perIp('remote-auth-login-ip', clientIp(request, server), LOGIN_REQUESTS))
      return exchangeTicket(body.ticket)
    },
  ),
]
