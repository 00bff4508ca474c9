// Remote (QR) login over REST (spec §4.10, WIRE.md §3): the mobile user's create / finish / cancel, and the desktop's
// unauthenticated ticket exchange. The desktop's socket is socket.ts.
import { Elysia } from 'elysia'
import { consume, perIp, reserve } from '../core/ratelimit'
import { clientIp } from '../http/client-ip'
import { identity } from '../http/identity'
import { doc, NO_CONTENT } from '../http/docs'
import { noContent } from '../http/respond'
import { LOGIN_REQUESTS, MOBILE_REQUESTS } from './limits'
import { cancelRemoteAuth, claimRemoteAuth, exchangeTicket, finishRemoteAuth } from './mobile'
import { CancelSchema, EncryptedTokenAnswer, FinishSchema, HandshakeAnswer, LoginSchema, StartSchema } from './schemas'

const BUCKET = 'remote-auth-user'

export const remoteAuthRoutes = new Elysia()
  .use(identity)
  .post(
    '/users/@me/remote-auth',
    ({ caller: me, body }) => {
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      return claimRemoteAuth(me, body.fingerprint)
    },
    {
      user: true,
      body: StartSchema,
      ...doc('remote-auth', 'Claim a desktop remote-auth session by its fingerprint', { 200: HandshakeAnswer }),
    },
  )
  .post(
    '/users/@me/remote-auth/finish',
    async ({ caller: me, body, request }) => {
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      await finishRemoteAuth(me, body.handshake_token, body.temporary_token, request)
      return noContent()
    },
    {
      user: true,
      body: FinishSchema,
      ...doc('remote-auth', 'Accept: the desktop receives a login ticket (MFA users: elevated)', { 204: NO_CONTENT }),
    },
  )
  .post(
    '/users/@me/remote-auth/cancel',
    async ({ caller: me, body }) => {
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      await cancelRemoteAuth(me, body.handshake_token)
      return noContent()
    },
    { user: true, body: CancelSchema, ...doc('remote-auth', 'Deny: the desktop receives cancel', { 204: NO_CONTENT }) },
  )
  .post(
    '/users/@me/remote-auth/login',
    (ctx) => {
      reserve(perIp('remote-auth-login-ip', clientIp(ctx.request, ctx.server), LOGIN_REQUESTS))
      return exchangeTicket(ctx.body.ticket)
    },
    {
      body: LoginSchema,
      ...doc('remote-auth', 'Desktop: exchange the ticket for a token encrypted to its key', {
        200: EncryptedTokenAnswer,
      }),
    },
  )
