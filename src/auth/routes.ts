// REST of login, registration, verification, phone codes, fingerprints, location metadata and password strength
// (unauthenticated), and sessions, logout, push devices, handoff (authenticated).
import type { Server } from 'bun'
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
import { endSession, listSessions } from '../accounts/sessions'
import { loginSettings } from '../accounts/settings'
import { cachedUser } from '../accounts/store'
import { perIp, reserve } from '../core/ratelimit'
import { countryOf } from '../geo/country'
import { clientIp } from '../http/client-ip'
import { NO_CONTENT } from '../http/docs'
import { endpoint } from '../http/endpoint'
import { optionalCaller } from '../http/identity'
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

const clientOf = (request: Request, server: Server<unknown> | null) => clientInfo(request, clientIp(request, server))
const PHONE_TOKEN_TTL_MS = 10 * 60_000
const tag = 'auth'

/** The auth domain's endpoints (http/endpoint.ts); recovery and account changes: recovery-routes.ts. */
export const authEndpoints = [
  endpoint(
    {
      method: 'POST',
      path: '/auth/login',
      auth: null,
      tag,
      summary: 'Log in with e-mail or phone and password',
      // Checked in the handler (checkLogin), after the logged-in case.
      handlerBody: LoginSchema,
      answers: { 200: LoginAnswer },
    },
    async ({ request, server, body }) => {
      // A client that is already logged in gets its session back, whatever the body.
      const caller = await optionalCaller(request)
      if (caller?.kind === 'user') {
        const user = await cachedUser(caller.userId)
        if (user)
          return {
            user_id: user.id,
            token: request.headers.get('authorization')!.trim(),
            user_settings: loginSettings(user),
          }
      }
      const input = checkLogin(body)
      const client = clientOf(request, server)
      // The body's fingerprint (as registration takes one) counts like the header.
      if (typeof input.fingerprint === 'string') client.fingerprint = input.fingerprint
      return login(input, { client, loginSource: input.login_source, giftCodeSkuId: input.gift_code_sku_id })
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/register',
      auth: null,
      tag,
      summary: 'Create an account',
      body: RegisterSchema,
      answers: { 200: RegisterAnswer },
    },
    ({ request, server, body }) => register(body, clientOf(request, server), request.headers.get('x-fingerprint')),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/verify',
      auth: null,
      tag,
      summary: 'Verify an e-mail address with the mailed token',
      body: VerifySchema,
      answers: { 200: VerifyAnswer },
    },
    ({ request, server, body }) => verifyEmail(body.token, clientOf(request, server)),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/authorize-ip',
      auth: null,
      tag,
      summary: 'Authorize a new login location with the mailed token',
      body: TokenSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ body }) => {
      const row = await redeemOneTime('authorize_ip', body.token)
      if (!row?.userId || !row.data.ip) throw tokenInvalid()
      await rememberIp(row.userId, row.data.ip)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/register/phone',
      auth: null,
      tag,
      summary: 'Text a verification code to a phone',
      body: PhoneSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ request, server, body }) => {
      const phone = body.phone
      if (!isE164(phone) || (await isPhoneBlocked(phone))) throw phoneNumberInvalid()
      await issuePhoneCode(phone, 'register', clientIp(request, server))
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/phone-verifications/verify',
      auth: null,
      tag,
      summary: 'Verify a texted code; returns a phone token',
      body: PhoneCodeSchema,
      answers: { 200: PhoneTokenAnswer },
    },
    async ({ request, server, body }) => {
      const { phone, code } = body
      await reserve(perIp('phone-verify-ip', clientIp(request, server), { limit: 30, windowMs: 3600_000 }))
      // The code answers for whichever flow texted it (registration, phone change, password reset).
      const purpose = ((await pendingPurposes(phone)).find((p) => !p.startsWith('mfa:')) ?? 'register') as PhonePurpose
      if (!isE164(phone) || !(await verifyPhoneCode(phone, code, purpose))) throw verificationCodeInvalid()
      return { token: await issueOneTime('phone', null, PHONE_TOKEN_TTL_MS, { phone, purpose }) }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/fingerprint',
      auth: null,
      tag,
      summary: 'A new fingerprint',
      answers: { 200: FingerprintAnswer },
    },
    async ({ request, server }) => ({ fingerprint: await createFingerprint(clientIp(request, server)) }),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/auth/location-metadata',
      auth: null,
      tag,
      summary: 'Country and consent rules for the caller',
      answers: { 200: LocationAnswer },
    },
    ({ request, server }) => {
      const ip = clientIp(request, server)
      const consent = consentRequired(ip)
      return {
        country_code: countryOf(ip) ?? 'US',
        consent_required: consent,
        promotional_email_opt_in: { required: consent, pre_checked: !consent },
      }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/password/validate',
      auth: null,
      tag,
      summary: 'Check a password against the policy',
      body: PasswordCheckSchema,
      answers: { 200: PasswordCheckAnswer },
    },
    ({ body }) => ({
      valid: passwordProblem(body.password) === null,
      password_strength: passwordStrength(body.password),
    }),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/handoff/exchange',
      auth: null,
      tag,
      summary: 'Exchange a handoff token',
      body: HandoffExchangeSchema,
      answers: { 200: HandoffExchangeAnswer },
    },
    ({ request, server, body }) => exchangeHandoff(body.key, body.handoff_token, clientOf(request, server)),
  ),
  endpoint(
    {
      method: 'GET',
      path: '/auth/sessions',
      auth: 'user',
      tag,
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
  endpoint(
    {
      method: 'POST',
      path: '/auth/logout',
      auth: 'user',
      tag,
      summary: 'End the current session',
      body: LogoutSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, body }) => {
      if (body?.token) await deletePushDeviceByToken(me.sessionId, body.token)
      if (body?.voip_token) await deletePushDeviceByVoipToken(me.sessionId, body.voip_token)
      await endSession(me.sessionId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/devices',
      auth: 'user',
      tag,
      summary: 'Register a push token for this session',
      body: DeviceSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, body }) => {
      await upsertPushDevice(me.sessionId, {
        provider: body.provider,
        token: body.token,
        voipProvider: body.voip_provider ?? null,
        voipToken: body.voip_token ?? null,
      })
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/verify/resend',
      auth: 'user',
      tag,
      summary: 'Send a new verification e-mail',
      answers: { 204: NO_CONTENT },
    },
    async ({ caller }) => (await resendVerification(caller.userId), noContent()),
  ),
  endpoint(
    {
      method: 'POST',
      path: '/auth/handoff',
      auth: 'user',
      tag,
      summary: 'Create a handoff token for another client on this IP',
      body: HandoffSchema,
      answers: { 200: HandoffAnswer },
    },
    async ({ caller, request, server, body }) => ({
      handoff_token: await createHandoff(caller.userId, body.key, clientIp(request, server)),
    }),
  ),
]
