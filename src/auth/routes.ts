// REST for accounts: registration, login, verification, phone codes, fingerprints, location metadata, password
// strength (unauthenticated) and sessions, logout, devices, settings, handoff (authenticated).
import { Elysia, t } from 'elysia'
import { addFieldError, Errors, errorTree, formError } from '../core/errors'
import { consume } from '../core/ratelimit'
import { countryOf } from '../geo/country'
import { events } from '../gateway/bus'
import { clientIp } from '../http/client-ip'
import { identity, optionalCaller, userCaller } from '../http/identity'
import { noContent } from '../http/respond'
import { findUser, updateUser } from '../accounts/store'
import { clientInfo } from '../accounts/client-info'
import { phoneNumberInvalid } from '../accounts/errors'
import { rememberIp } from '../accounts/complete-login'
import { createFingerprint } from '../accounts/fingerprints'
import { tokenInvalid, verificationCodeInvalid } from './errors'
import { createHandoff, exchangeHandoff } from './handoff'
import { login } from './login'
import { issueOneTime, redeemOneTime } from '../accounts/one-time'
import { PASSWORD_MAX, PASSWORD_MIN, passwordProblem, passwordStrength } from '../accounts/password-policy'
import { isE164, issuePhoneCode, isPhoneBlocked, pendingPurposes, verifyPhoneCode, type PhonePurpose } from '../accounts/phone'
import { consentRequired, register, resendVerification, verifyEmail } from './register'
import { deleteSession, listSessions } from '../accounts/sessions'
import { LOCALES, loginSettings, THEMES } from '../accounts/settings'
import { deletePushDeviceByToken, deletePushDeviceByVoipToken, upsertPushDevice } from './store'
import { config } from '../config'

type Ctx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }
const clientOf = ({ request, server }: Ctx) => clientInfo(request, clientIp(request, server))

const LOGIN_SOURCES = ['gift', 'guild_template', 'guild_invite', 'dm_invite', 'friend_invite', 'role_subscription', 'role_subscription_setting'] as const
const loginSource = t.Optional(t.Nullable(t.Union(LOGIN_SOURCES.map((s) => t.Literal(s)))))
const skuId = t.Optional(t.Nullable(t.String({ pattern: '^\\d{1,20}$' })))
const password = t.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX })
const tags = (summary: string) => ({ detail: { tags: ['auth'], summary } })
export const PHONE_TOKEN_TTL_MS = 10 * 60_000

export const authPublicRoutes = new Elysia()
  .post(
    '/auth/login',
    async (ctx) => {
      // A client that is already logged in gets its session back, whatever the body.
      const caller = await optionalCaller(ctx.request)
      if (caller?.kind === 'user') {
        const user = findUser(caller.userId)
        if (user) return { user_id: user.id, token: ctx.request.headers.get('authorization')!.trim(), user_settings: loginSettings(user) }
      }
      const body = ctx.body as { login?: unknown; password?: unknown }
      if (!body || typeof body !== 'object') throw formError({ login: ['BASE_TYPE_REQUIRED', 'This field is required'], password: ['BASE_TYPE_REQUIRED', 'This field is required'] })
      validateLoginBody(body)
      const input = body as { login: string; password: string; undelete?: boolean; login_source?: string | null; gift_code_sku_id?: string | null; fingerprint?: unknown }
      const client = clientOf(ctx)
      // The body's fingerprint (as registration takes one) counts like the header.
      if (typeof input.fingerprint === 'string') client.fingerprint = input.fingerprint
      return login(input, { client, loginSource: input.login_source, giftCodeSkuId: input.gift_code_sku_id })
    },
    { ...tags('Log in with e-mail or phone and password') },
  )
  .post('/auth/register', async (ctx) => register(ctx.body, clientOf(ctx), ctx.request.headers.get('x-fingerprint')), {
    body: t.Object({
      username: t.Optional(t.String({ maxLength: 64 })),
      global_name: t.Optional(t.Nullable(t.String({ minLength: 1, maxLength: 32 }))),
      email: t.Optional(t.String({ maxLength: 254 })),
      phone_token: t.Optional(t.String({ maxLength: 256 })),
      password: t.Optional(t.String({ maxLength: 256 })),
      date_of_birth: t.Optional(t.String({ maxLength: 10 })),
      fingerprint: t.Optional(t.String({ maxLength: 64 })),
      invite: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
      guild_template_code: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
      gift_code_sku_id: skuId,
      consent: t.Optional(t.Boolean()),
      promotional_email_opt_in: t.Optional(t.Boolean()),
    }),
    ...tags('Create an account'),
  })
  .post('/auth/verify', async (ctx) => verifyEmail(ctx.body.token, clientOf(ctx)), {
    body: t.Object({ token: t.String({ maxLength: 256 }), captcha_key: t.Optional(t.Nullable(t.String())) }),
    ...tags('Verify an e-mail address with the mailed token'),
  })
  .post(
    '/auth/authorize-ip',
    ({ body }) => {
      const row = redeemOneTime('authorize_ip', body.token)
      if (!row?.userId || !row.data.ip) throw tokenInvalid()
      rememberIp(row.userId, row.data.ip)
      return noContent()
    },
    { body: t.Object({ token: t.String({ maxLength: 256 }) }), ...tags('Authorize a new login location with the mailed token') },
  )
  .post(
    '/auth/register/phone',
    async (ctx) => {
      const phone = ctx.body.phone
      if (!isE164(phone) || isPhoneBlocked(phone)) throw phoneNumberInvalid()
      await issuePhoneCode(phone, 'register', clientIp(ctx.request, ctx.server))
      return noContent()
    },
    { body: t.Object({ phone: t.String({ maxLength: 20 }) }), ...tags('Text a verification code to a phone') },
  )
  .post(
    '/phone-verifications/verify',
    async (ctx) => {
      const { phone, code } = ctx.body
      consume('phone-verify-ip', clientIp(ctx.request, ctx.server), { limit: 30, windowMs: 3600_000 })
      // The code answers for whichever flow texted it (registration, phone change, password reset).
      const purpose = (pendingPurposes(phone).find((p) => !p.startsWith('mfa:')) ?? 'register') as PhonePurpose
      if (!isE164(phone) || !verifyPhoneCode(phone, code, purpose)) throw verificationCodeInvalid()
      return { token: issueOneTime('phone', null, PHONE_TOKEN_TTL_MS, { phone, purpose }) }
    },
    { body: t.Object({ phone: t.String({ maxLength: 20 }), code: t.String({ maxLength: 16 }) }), ...tags('Verify a texted code; returns a phone token') },
  )
  .post('/auth/fingerprint', (ctx) => ({ fingerprint: createFingerprint(clientIp(ctx.request, ctx.server)) }), tags('A new fingerprint'))
  .get(
    '/auth/location-metadata',
    (ctx) => {
      const ip = clientIp(ctx.request, ctx.server)
      const consent = consentRequired(ip)
      return { country_code: countryOf(ip) ?? 'US', consent_required: consent, promotional_email_opt_in: { required: consent, pre_checked: !consent } }
    },
    tags('Country and consent rules for the caller'),
  )
  .post(
    '/auth/password/validate',
    ({ body }) => ({ valid: passwordProblem(body.password) === null, password_strength: passwordStrength(body.password) }),
    { body: t.Object({ password }), ...tags('Check a password against the policy') },
  )
  .post(
    '/auth/handoff/exchange',
    async (ctx) => exchangeHandoff(ctx.body.key, ctx.body.handoff_token, clientOf(ctx)),
    { body: t.Object({ key: t.String({ minLength: 1, maxLength: 256 }), handoff_token: t.String({ maxLength: 256 }) }), ...tags('Exchange a handoff token') },
  )

function validateLoginBody(body: Record<string, unknown>) {
  const errors = errorTree()
  const fail = (field: string, code: string, message: string) => addFieldError(errors, field, { code, message })
  if (typeof body.login !== 'string' || !body.login.trim()) fail('login', 'BASE_TYPE_REQUIRED', 'This field is required')
  else if (body.login.length > 320) fail('login', 'BASE_TYPE_MAX_LENGTH', 'Must be 320 or fewer in length.')
  if (typeof body.password !== 'string') fail('password', 'BASE_TYPE_REQUIRED', 'This field is required')
  else if (body.password.length < PASSWORD_MIN || body.password.length > PASSWORD_MAX) fail('password', 'BASE_TYPE_BAD_LENGTH', `Must be between ${PASSWORD_MIN} and ${PASSWORD_MAX} in length.`)
  if (body.undelete !== undefined && typeof body.undelete !== 'boolean') fail('undelete', 'BOOLEAN_TYPE_CONVERT', 'Must be either true or false.')
  if (body.login_source != null && !LOGIN_SOURCES.includes(body.login_source as never)) fail('login_source', 'BASE_TYPE_CHOICES', `Value must be one of ${JSON.stringify(LOGIN_SOURCES)}.`)
  if (body.gift_code_sku_id != null && (typeof body.gift_code_sku_id !== 'string' || !/^\d{1,20}$/.test(body.gift_code_sku_id))) fail('gift_code_sku_id', 'BASE_TYPE_INVALID', 'Invalid value.')
  if (Object.keys(errors).length) throw Errors.invalidFormBody(errors)
}

export const authSessionRoutes = new Elysia()
  .use(identity)
  .get(
    '/auth/sessions',
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
    { auth: 'user', ...tags('Active sessions of the account (up to 50)') },
  )
  .post(
    '/auth/logout',
    async ({ caller, body }) => {
      const me = userCaller(caller)
      if (body?.token) deletePushDeviceByToken(me.sessionId, body.token)
      if (body?.voip_token) deletePushDeviceByVoipToken(me.sessionId, body.voip_token)
      await deleteSession(me.sessionId)
      events.closeAuthSession(me.sessionId, 4004, 'Authentication failed')
      return noContent()
    },
    {
      auth: 'user',
      body: t.Optional(
        t.Nullable(
          t.Object({
            provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
            token: t.Optional(t.Nullable(t.String({ maxLength: 4096 }))),
            voip_provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
            voip_token: t.Optional(t.Nullable(t.String({ maxLength: 4096 }))),
          }),
        ),
      ),
      ...tags('End the current session'),
    },
  )
  .post(
    '/users/@me/devices',
    ({ caller, body }) => {
      const me = userCaller(caller)
      upsertPushDevice(me.sessionId, { provider: body.provider, token: body.token, voipProvider: body.voip_provider ?? null, voipToken: body.voip_token ?? null })
      return noContent()
    },
    {
      auth: 'user',
      body: t.Object({
        provider: t.String({ minLength: 1, maxLength: 64 }),
        token: t.String({ minLength: 1, maxLength: 4096 }),
        voip_provider: t.Optional(t.Nullable(t.String({ maxLength: 64 }))),
        voip_token: t.Optional(t.Nullable(t.String({ maxLength: 4096 }))),
      }),
      ...tags('Register a push token for this session'),
    },
  )
  .get(
    '/users/@me/settings',
    ({ caller }) => loginSettings(findUser(caller.userId)!),
    { auth: 'user', ...tags('Login settings (locale, theme)') },
  )
  .patch(
    '/users/@me/settings',
    async ({ caller, body }) => {
      const patch = { ...(body.locale !== undefined ? { locale: body.locale } : {}), ...(body.theme !== undefined ? { theme: body.theme } : {}) }
      if (Object.keys(patch).length) updateUser(caller.userId, patch)
      const settings = loginSettings(findUser(caller.userId)!)
      events.publish(`user:${caller.userId}`, 'USER_SETTINGS_UPDATE', settings)
      return settings
    },
    {
      auth: 'user',
      body: t.Object({
        locale: t.Optional(t.Union(LOCALES.map((l) => t.Literal(l)))),
        theme: t.Optional(t.Union(THEMES.map((l) => t.Literal(l)))),
      }),
      ...tags('Change locale or theme'),
    },
  )
  .post('/auth/verify/resend', async ({ caller }) => (await resendVerification(caller.userId), noContent()), { auth: 'user', ...tags('Send a new verification e-mail') })
  .post('/auth/handoff', (ctx) => ({ handoff_token: createHandoff(ctx.caller.userId, ctx.body.key, clientIp(ctx.request, ctx.server)) }), {
    auth: 'user',
    body: t.Object({ key: t.String({ minLength: 1, maxLength: 256 }) }),
    ...tags('Create a handoff token for another client on this IP'),
  })

export { config }
