// Remote (QR) login over REST (spec §4.10, WIRE.md §3): the mobile user's create / finish / cancel, and the desktop's
// unauthenticated ticket exchange. The desktop's socket is socket.ts.
import { Elysia } from 'elysia'
import { consume } from '../core/ratelimit'
import { clientIp } from '../http/client-ip'
import { identity, userCaller } from '../http/identity'
import { noContent } from '../http/respond'
import { LOGIN_REQUESTS, MOBILE_REQUESTS } from './limits'
import { cancelRemoteAuth, claimRemoteAuth, exchangeTicket, finishRemoteAuth } from './mobile'
import { CancelSchema, FinishSchema, LoginSchema, StartSchema } from './schemas'

const tags = (summary: string) => ({ detail: { tags: ['remote-auth'], summary } })
const BUCKET = 'remote-auth-user'

export const remoteAuthRoutes = new Elysia()
  .use(identity)
  .post(
    '/users/@me/remote-auth',
    ({ caller, body }) => {
      const me = userCaller(caller)
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      return claimRemoteAuth(me, body.fingerprint)
    },
    { auth: 'user', body: StartSchema, ...tags('Claim a desktop remote-auth session by its fingerprint') },
  )
  .post(
    '/users/@me/remote-auth/finish',
    async ({ caller, body, request }) => {
      const me = userCaller(caller)
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      await finishRemoteAuth(me, body.handshake_token, body.temporary_token, request)
      return noContent()
    },
    { auth: 'user', body: FinishSchema, ...tags('Accept: the desktop receives a login ticket (MFA users: elevated)') },
  )
  .post(
    '/users/@me/remote-auth/cancel',
    ({ caller, body }) => {
      const me = userCaller(caller)
      consume(BUCKET, me.userId, MOBILE_REQUESTS)
      cancelRemoteAuth(me, body.handshake_token)
      return noContent()
    },
    { auth: 'user', body: CancelSchema, ...tags('Deny: the desktop receives cancel') },
  )
  .post(
    '/users/@me/remote-auth/login',
    (ctx) => {
      consume('remote-auth-login-ip', clientIp(ctx.request, ctx.server), LOGIN_REQUESTS)
      return exchangeTicket(ctx.body.ticket)
    },
    { body: LoginSchema, ...tags('Desktop: exchange the ticket for a token encrypted to its key') },
  )
