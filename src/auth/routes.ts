// REST of login, registration, verification, phone codes, fingerprints, location metadata and password strength
// (unauthenticated), and sessions, logout, push devices, handoff (authenticated).
import { Elysia } from 'elysia'
import { clientInfo } from '../accounts/client-info'
import { rememberIp } from '../accounts/complete-login'
import { phoneNumberInvalid } from '../accounts/errors'
import { createFingerprint } from '../accounts/fingerprints'
import { issueOneTime, redeemOneTime } from '../accounts/one-time'
import { passwordProblem, passwordStrength } from '../accounts/password-policy'
import {
  isE164,
  issuePhoneCode,
  isPhoneBlocked,
  pendingPurposes,
  verifyPhoneCode,
  type PhonePurpose,
} from '../accounts/phone'
import { deleteSession, listSessions } from '../accounts/sessions'
import { loginSettings } from '../accounts/settings'
import { findUser } from '../accounts/store'
import { perIp, reserve } from '../core/ratelimit'
import { events } from '../gateway/bus'
import { countryOf } from '../geo/country'
import { clientIp } from '../http/client-ip'
import { doc, NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { identity, optionalCaller } from '../http/identity'
import { noContent } from '../http/respond'
import { tokenInvalid, verificationCodeInvalid } from './errors'
import { createHandoff, exchangeHandoff } from './handoff'
import { login } from './login'
import { consentRequired, register, resendVerification, verifyEmail } from './register'
import {
  checkLogin,
  DeviceSchema,
  FingerprintAnswer,
  HandoffAnswer,
  HandoffSchema,
  HandoffExchangeAnswer,
  HandoffExchangeSchema,
  LocationAnswer,
  LoginAnswer,
  LoginSchema,
  LogoutSchema,
  PasswordCheckAnswer,
  PasswordCheckSchema,
  PhoneSchema,
  PhoneCodeSchema,
  PhoneTokenAnswer,
  RegisterAnswer,
  RegisterSchema,
  SessionsAnswer,
  TokenSchema,
  VerifyAnswer,
  VerifySchema,
} from './schemas'
import { deletePushDeviceByToken, deletePushDeviceByVoipToken, upsertPushDevice } from './store'

type Ctx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }
const clientOf = ({ request, server }: Ctx) => clientInfo(request, clientIp(request, server))
const PHONE_TOKEN_TTL_MS = 10 * 60_000

export const authPublicRoutes = new Elysia()
  .post(
    '/auth/login',
    async (ctx) => {
      // A client that is already logged in gets its session back, whatever the body.
      const caller = await optionalCaller(ctx.request)
      if (caller?.kind === 'user') {
        const user = await findUser(caller.userId)
        if (user)
          return {
            user_id: user.id,
            token: ctx.request.headers.get('authorization')!.trim(),
            user_settings: loginSettings(user),
          }
      }
      const input = checkLogin(ctx.body)
      const client = clientOf(ctx)
      // The body's fingerprint (as registration takes one) counts like the header.
      if (typeof input.fingerprint === 'string') client.fingerprint = input.fingerprint
      return login(input, { client, loginSource: input.login_source, giftCodeSkuId: input.gift_code_sku_id })
    },
    // The body is checked in the handler (checkLogin), after the logged-in case.
    doc('auth', 'Log in with e-mail or phone and password', { 200: LoginAnswer }, { body: LoginSchema }),
  )
  .post('/auth/register', async (ctx) => register(ctx.body, clientOf(ctx), ctx.request.headers.get('x-fingerprint')), {
    body: RegisterSchema,
    ...doc('auth', 'Create an account', { 200: RegisterAnswer }),
  })
  .post('/auth/verify', async (ctx) => verifyEmail(ctx.body.token, clientOf(ctx)), {
    body: VerifySchema,
    ...doc('auth', 'Verify an e-mail address with the mailed token', { 200: VerifyAnswer }),
  })
  .post(
    '/auth/authorize-ip',
    async ({ body }) => {
      const row = await redeemOneTime('authorize_ip', body.token)
      if (!row?.userId || !row.data.ip) throw tokenInvalid()
      await rememberIp(row.userId, row.data.ip)
      return noContent()
    },
    { body: TokenSchema, ...doc('auth', 'Authorize a new login location with the mailed token', { 204: NO_CONTENT }) },
  )
  .post(
    '/auth/register/phone',
    async (ctx) => {
      const phone = ctx.body.phone
      if (!isE164(phone) || (await isPhoneBlocked(phone))) throw phoneNumberInvalid()
      await issuePhoneCode(phone, 'register', clientIp(ctx.request, ctx.server))
      return noContent()
    },
    { body: PhoneSchema, ...doc('auth', 'Text a verification code to a phone', { 204: NO_CONTENT }) },
  )
  .post(
    '/phone-verifications/verify',
    async (ctx) => {
      const { phone, code } = ctx.body
      reserve(perIp('phone-verify-ip', clientIp(ctx.request, ctx.server), { limit: 30, windowMs: 3600_000 }))
      // The code answers for whichever flow texted it (registration, phone change, password reset).
      const purpose = ((await pendingPurposes(phone)).find((p) => !p.startsWith('mfa:')) ?? 'register') as PhonePurpose
      if (!isE164(phone) || !(await verifyPhoneCode(phone, code, purpose))) throw verificationCodeInvalid()
      return { token: await issueOneTime('phone', null, PHONE_TOKEN_TTL_MS, { phone, purpose }) }
    },
    { body: PhoneCodeSchema, ...doc('auth', 'Verify a texted code; returns a phone token', { 200: PhoneTokenAnswer }) },
  )
  .post(
    '/auth/fingerprint',
    async (ctx) => ({ fingerprint: await createFingerprint(clientIp(ctx.request, ctx.server)) }),
    doc('auth', 'A new fingerprint', { 200: FingerprintAnswer }),
  )
  .get(
    '/auth/location-metadata',
    (ctx) => {
      const ip = clientIp(ctx.request, ctx.server)
      const consent = consentRequired(ip)
      return {
        country_code: countryOf(ip) ?? 'US',
        consent_required: consent,
        promotional_email_opt_in: { required: consent, pre_checked: !consent },
      }
    },
    doc('auth', 'Country and consent rules for the caller', { 200: LocationAnswer }),
  )
  .post(
    '/auth/password/validate',
    ({ body }) => ({
      valid: passwordProblem(body.password) === null,
      password_strength: passwordStrength(body.password),
    }),
    { body: PasswordCheckSchema, ...doc('auth', 'Check a password against the policy', { 200: PasswordCheckAnswer }) },
  )
  .post(
    '/auth/handoff/exchange',
    async (ctx) => await exchangeHandoff(ctx.body.key, ctx.body.handoff_token, clientOf(ctx)),
    {
      body: HandoffExchangeSchema,
      ...doc('auth', 'Exchange a handoff token', { 200: HandoffExchangeAnswer }),
    },
  )

/** The auth domain's declared endpoints (http/endpoint.ts); its other routes are the Elysia plugins here. */
export const authEndpoints = [
  endpoint(
    {
      method: 'GET',
      path: '/auth/sessions',
      auth: 'user',
      tag: 'auth',
      summary: 'Active sessions of the account (up to 50)',
      answers: { 200: SessionsAnswer },
      hot: true,
    },
    // The account's sessions, most recently used first.
    async ({ caller }) => {
      const rows = (await listSessions(caller.userId)).sort((a, b) => b.lastUsedAt - a.lastUsedAt).slice(0, 50)
      return {
        user_sessions: rows.map((s) => ({
          id_hash: s.idHash,
          approx_last_used_time: new Date(s.lastUsedAt).toISOString(),
          client_info: { os: s.clientOs, platform: s.clientPlatform, location: s.clientLocation },
        })),
      }
    },
  ),
]

export const authSessionRoutes = new Elysia()
  .use(identity)
  .post(
    '/auth/logout',
    async ({ caller: me, body }) => {
      if (body?.token) await deletePushDeviceByToken(me.sessionId, body.token)
      if (body?.voip_token) await deletePushDeviceByVoipToken(me.sessionId, body.voip_token)
      await deleteSession(me.sessionId)
      events.closeAuthSession(me.sessionId, 4004, 'Authentication failed')
      return noContent()
    },
    {
      user: true,
      body: LogoutSchema,
      ...doc('auth', 'End the current session', { 204: NO_CONTENT }),
    },
  )
  .post(
    '/users/@me/devices',
    async ({ caller: me, body }) => {
      await upsertPushDevice(me.sessionId, {
        provider: body.provider,
        token: body.token,
        voipProvider: body.voip_provider ?? null,
        voipToken: body.voip_token ?? null,
      })
      return noContent()
    },
    {
      user: true,
      body: DeviceSchema,
      ...doc('auth', 'Register a push token for this session', { 204: NO_CONTENT }),
    },
  )
  .post('/auth/verify/resend', async ({ caller }) => (await resendVerification(caller.userId), noContent()), {
    user: true,
    ...doc('auth', 'Send a new verification e-mail', { 204: NO_CONTENT }),
  })
  .post(
    '/auth/handoff',
    async (ctx) => ({
      handoff_token: await createHandoff(ctx.caller.userId, ctx.body.key, clientIp(ctx.request, ctx.server)),
    }),
    {
      user: true,
      body: HandoffSchema,
      ...doc('auth', 'Create a handoff token for another client on this IP', { 200: HandoffAnswer }),
    },
  )
