// REST for MFA: login with a second factor, passwordless WebAuthn, elevation (/mfa/finish) and enrolment of TOTP,
// backup codes, SMS and security keys.
import { Elysia, t } from 'elysia'
import { eq } from 'drizzle-orm'
import { clientInfo } from '../auth/client-info'
import { completeLogin } from '../auth/complete-login'
import { confirmPassword } from '../auth/passwords'
import { isE164, isPhoneBlocked, issuePhoneCode, rememberPhone } from '../auth/phone'
import { redeemOneTime } from '../auth/one-time'
import { endSessions, replaceSession } from '../auth/sessions'
import { clock } from '../core/clock'
import { ApiError, Errors, formError } from '../core/errors'
import { consume } from '../core/ratelimit'
import { db, transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { clientIp } from '../http/client-ip'
import { identity, optionalCaller, userCaller } from '../http/identity'
import { noContent } from '../http/respond'
import { privateUser } from '../users/serialize'
import { users, type UserRow } from '../users/tables'
import { listBackupCodes, newBackupCodes, regenerateBackupCodes, removeBackupCodes, storeBackupCodes } from './backup-codes'
import { ELEVATION_COOKIE, ELEVATION_TTL_S, requireElevation, signElevation } from './elevation'
import { hasSms, mfaEnabled, sendTicketSms, verifyFactor } from './factors'
import { finishMfaLogin } from './login'
import { smsFactors } from './tables'
import { invalidTicket, issueTicket, loadTicket, redeemTicket, wrongCode, type TicketPurpose, type TicketRow } from './tickets'
import { matchingStep, parseSecret, removeTotp, saveTotp, hasTotp } from './totp'
import {
  authenticationOptions, authenticatorView, credentialsOf, hasWebauthn, registerCredential, registrationOptions,
  removeCredential, renameCredential, verifyAssertion,
} from './webauthn'
import { loginSettings } from '../auth/settings'

type Ctx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }
const ipOf = (ctx: Ctx) => clientIp(ctx.request, ctx.server)
const clientOf = (ctx: Ctx) => clientInfo(ctx.request, ipOf(ctx))
const tags = (summary: string) => ({ detail: { tags: ['mfa'], summary } })
const LOGIN_SOURCE = t.Optional(t.Nullable(t.String({ maxLength: 64 })))
const SKU = t.Optional(t.Nullable(t.String({ pattern: '^\\d{1,20}$' })))
const MFA_PER_IP = { limit: 60, windowMs: 10 * 60_000 }

const notEnrolled = () => new ApiError(400, 60002, 'Two factor is not enabled for this account')
const userOf = (id: string): UserRow => {
  const user = db().select().from(users).where(eq(users.id, id)).get()
  if (!user) throw Errors.unauthorized()
  return user
}
const userChanged = (userId: string) => events.publish(topics.account(userId), 'USER_UPDATE', privateUser(userOf(userId), mfaEnabled(userId)))

/** With no TOTP and no security key left, MFA is off: SMS and backup codes go with it. */
function dropDependentFactors(userId: string) {
  if (mfaEnabled(userId)) return
  removeBackupCodes(userId)
  db().delete(smsFactors).where(eq(smsFactors.userId, userId)).run()
}

export const mfaPublicRoutes = new Elysia()
  .post(
    '/auth/mfa/sms/send',
    async (ctx) => {
      consume('mfa-sms-ip', ipOf(ctx), MFA_PER_IP)
      const row = anyTicket(ctx.body.ticket, ['login', 'reset', 'elevate'])
      return { phone: await sendTicketSms(row, ipOf(ctx)) }
    },
    { body: t.Object({ ticket: t.String({ maxLength: 256 }) }), ...tags('Text a login code for an MFA ticket') },
  )
  .post(
    '/auth/mfa/:type',
    async (ctx) => {
      if (!['totp', 'sms', 'backup', 'webauthn'].includes(ctx.params.type)) throw Errors.notFound()
      consume('mfa-ip', ipOf(ctx), MFA_PER_IP)
      const { ticket, code, login_source, gift_code_sku_id } = ctx.body
      const { token, user_settings, required_actions } = await finishMfaLogin(ctx.params.type, ticket, code, {
        client: clientOf(ctx),
        loginSource: login_source,
        giftCodeSkuId: gift_code_sku_id,
      })
      return { token, user_settings, ...(required_actions ? { required_actions } : {}) }
    },
    {
      body: t.Object({
        ticket: t.String({ maxLength: 256 }),
        code: t.String({ maxLength: 64 * 1024 }),
        login_instance_id: t.Optional(t.Nullable(t.String({ maxLength: 256 }))),
        login_source: LOGIN_SOURCE,
        gift_code_sku_id: SKU,
      }),
      ...tags('Finish a login with a second factor'),
    },
  )
  .post(
    '/auth/conditional/start',
    async (ctx) => {
      // Already logged in: the client gets its token back, as the spec says.
      const caller = await optionalCaller(ctx.request)
      if (caller?.kind === 'user') {
        return { user_id: caller.userId, token: ctx.request.headers.get('authorization')!.trim(), user_settings: loginSettings(userOf(caller.userId)) }
      }
      consume('conditional-ip', ipOf(ctx), MFA_PER_IP)
      const options = await authenticationOptions(null, 'required')
      return { ticket: issueTicket('conditional', null, { challenge: options.challenge }), challenge: options.json }
    },
    tags('Start a passwordless WebAuthn login'),
  )
  .post(
    '/auth/conditional/finish',
    async (ctx) => {
      const row = loadTicket('conditional', ctx.body.ticket)
      if (!redeemTicket(row)) throw invalidTicket() // one assertion per challenge
      const credential = await verifyAssertion(ctx.body.credential, row.challenge!, null)
      if (!credential) throw new ApiError(400, 60008, 'Invalid two-factor code')
      const user = userOf(credential.userId)
      if (user.state !== 'active' || user.compromised) throw new ApiError(400, 60008, 'Invalid two-factor code')
      return completeLogin(user, { client: clientOf(ctx), loginSource: ctx.body.login_source, giftCodeSkuId: ctx.body.gift_code_sku_id })
    },
    {
      body: t.Object({ ticket: t.String({ maxLength: 256 }), credential: t.String({ maxLength: 64 * 1024 }), login_source: LOGIN_SOURCE, gift_code_sku_id: SKU }),
      ...tags('Finish a passwordless WebAuthn login'),
    },
  )

function anyTicket(ticket: string, purposes: TicketPurpose[]): TicketRow {
  for (const p of purposes) {
    try {
      return loadTicket(p, ticket)
    } catch {}
  }
  throw invalidTicket()
}

export const mfaSessionRoutes = new Elysia()
  .use(identity)
  .post(
    '/mfa/finish',
    async ({ caller, body, cookie }) => {
      const me = userCaller(caller)
      const row = loadTicket('elevate', body.ticket)
      if (row.userId !== me.userId || row.sessionId !== me.sessionId) throw invalidTicket()
      await verifyFactor(row, body.mfa_type, body.data)
      if (!redeemTicket(row)) throw invalidTicket()
      const token = await signElevation(me)
      cookie[ELEVATION_COOKIE].set({ value: token, secure: true, httpOnly: true, sameSite: 'strict', path: '/', maxAge: ELEVATION_TTL_S })
      return { token }
    },
    {
      auth: 'user',
      body: t.Object({ ticket: t.String({ maxLength: 256 }), mfa_type: t.String({ maxLength: 16 }), data: t.String({ maxLength: 64 * 1024 }) }),
      ...tags('Prove a factor; returns a 5-minute elevation token'),
    },
  )
  .post(
    '/users/@me/mfa/totp/enable',
    async ({ caller, body }) => {
      const me = userCaller(caller)
      const account = userOf(me.userId)
      await confirmPassword(account, body.password)
      if (hasTotp(me.userId)) throw new ApiError(400, 60001, 'Already enrolled in two factor')
      const secret = parseSecret(body.secret)
      if (!secret) throw new ApiError(400, 60005, 'Invalid two-factor secret')
      const step = matchingStep(secret, body.code.replace(/\s+/g, ''))
      if (step === undefined) throw new ApiError(400, 60008, 'Invalid two-factor code')
      // The secret and its backup codes commit together (codes hashed first): a crash never leaves TOTP on
      // without backup codes.
      const fresh = await newBackupCodes()
      const backup_codes = transaction(() => {
        if (!saveTotp(me.userId, secret, step)) throw new ApiError(400, 60001, 'Already enrolled in two factor')
        return storeBackupCodes(me.userId, fresh)
      })
      // New credentials, new token: every other session ends, this one continues under a new token.
      await endSessions(me.userId, me.sessionId)
      const token = await replaceSession(me)
      userChanged(me.userId)
      return { token, backup_codes }
    },
    {
      auth: 'user',
      body: t.Object({ secret: t.String({ maxLength: 128 }), code: t.String({ maxLength: 16 }), password: t.String({ maxLength: 256 }) }),
      ...tags('Enable TOTP'),
    },
  )
  .post(
    '/users/@me/mfa/totp/disable',
    async ({ caller, request }) => {
      const me = userCaller(caller)
      if (!hasTotp(me.userId)) throw notEnrolled()
      await requireElevation(me, request)
      removeTotp(me.userId)
      dropDependentFactors(me.userId)
      const token = await replaceSession(me)
      userChanged(me.userId)
      return { token }
    },
    { auth: 'user', ...tags('Disable TOTP (elevated)') },
  )
  .post(
    '/users/@me/mfa/codes-verification',
    async ({ caller, request, body }) => {
      const me = userCaller(caller)
      if (!mfaEnabled(me.userId)) throw notEnrolled()
      await requireElevation(me, request)
      return { backup_codes: body?.regenerate ? await regenerateBackupCodes(me.userId) : listBackupCodes(me.userId) }
    },
    {
      auth: 'user',
      body: t.Optional(t.Object({ regenerate: t.Optional(t.Boolean()), key: t.Optional(t.String({ maxLength: 256 })), nonce: t.Optional(t.String({ maxLength: 256 })) })),
      ...tags('View or regenerate backup codes (elevated)'),
    },
  )
  .post(
    '/users/@me/mfa/sms/enable',
    async ({ caller, body }) => {
      const me = userCaller(caller)
      const account = userOf(me.userId)
      await confirmPassword(account, body.password)
      // SMS only comes on top of a stronger factor, and needs a verified phone.
      if (!mfaEnabled(me.userId) || !account.phone) throw new ApiError(400, 60012, 'SMS authentication cannot be enabled')
      db().insert(smsFactors).values({ userId: me.userId, createdAt: clock.now() }).onConflictDoNothing().run()
      return noContent()
    },
    { auth: 'user', body: t.Object({ password: t.String({ maxLength: 256 }) }), ...tags('Enable SMS as a second factor') },
  )
  .post(
    '/users/@me/mfa/sms/disable',
    async ({ caller, request, body }) => {
      const me = userCaller(caller)
      await confirmPassword(userOf(me.userId), body.password)
      if (!hasSms(me.userId)) throw new ApiError(400, 60010, 'SMS authentication is not enabled')
      await requireElevation(me, request)
      db().delete(smsFactors).where(eq(smsFactors.userId, me.userId)).run()
      return noContent()
    },
    { auth: 'user', body: t.Object({ password: t.String({ maxLength: 256 }) }), ...tags('Disable SMS as a second factor (elevated)') },
  )
  .post(
    '/users/@me/phone',
    async (ctx) => {
      const me = userCaller(ctx.caller)
      const body = ctx.body
      if (body.phone_token === undefined) {
        // Step one: text a code to the new number; /phone-verifications/verify turns it into a phone_token.
        if (!isE164(body.phone) || isPhoneBlocked(body.phone)) throw formError({ phone: ['PHONE_NUMBER_INVALID', 'Invalid phone number.'] })
        await issuePhoneCode(body.phone, 'verify', ipOf(ctx))
        return noContent()
      }
      await confirmPassword(userOf(me.userId), body.password)
      const row = redeemOneTime('phone', body.phone_token)
      const phone = row?.data.phone
      const invalid = () => formError({ phone_token: ['PHONE_VERIFICATION_INVALID', 'Invalid phone verification.'] })
      if (!phone || row.data.purpose === 'reset' || isPhoneBlocked(phone)) throw invalid()
      const owner = db().select({ id: users.id }).from(users).where(eq(users.phone, phone)).get()
      if (owner && owner.id !== me.userId) throw formError({ phone_token: ['PHONE_NUMBER_ALREADY_TAKEN', 'This phone number is already used by another account.'] })
      try {
        db().update(users).set({ phone }).where(eq(users.id, me.userId)).run()
      } catch {
        throw invalid() // another account took it at the same moment
      }
      rememberPhone(me.userId, phone)
      userChanged(me.userId)
      return noContent()
    },
    {
      auth: 'user',
      body: t.Object({
        phone: t.Optional(t.String({ maxLength: 20 })),
        phone_token: t.Optional(t.String({ maxLength: 256 })),
        password: t.Optional(t.String({ maxLength: 256 })),
        change_phone_reason: t.Optional(t.String({ maxLength: 64 })),
      }),
      ...tags('Text a code to a new phone, or set the verified phone'),
    },
  )
  .delete(
    '/users/@me/phone',
    async ({ caller, request, body }) => {
      const me = userCaller(caller)
      await confirmPassword(userOf(me.userId), body.password)
      if (hasSms(me.userId)) {
        await requireElevation(me, request)
        db().delete(smsFactors).where(eq(smsFactors.userId, me.userId)).run()
      }
      db().update(users).set({ phone: null }).where(eq(users.id, me.userId)).run()
      userChanged(me.userId)
      return noContent()
    },
    { auth: 'user', body: t.Object({ password: t.String({ maxLength: 256 }) }), ...tags('Remove the phone (elevated when it is a second factor)') },
  )
  .post(
    '/users/@me/mfa/webauthn/credentials',
    async ({ caller, body }) => {
      const me = userCaller(caller)
      const input = (body ?? {}) as { ticket?: unknown; name?: unknown; credential?: unknown }
      if (input.ticket === undefined && input.credential === undefined) {
        const options = await registrationOptions(userOf(me.userId))
        return { ticket: issueTicket('webauthn_register', me.userId, { challenge: options.challenge }), challenge: options.json }
      }
      const name = typeof input.name === 'string' ? input.name.trim() : ''
      if (name.length < 1 || name.length > 32) throw formError({ name: ['BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 32 in length.'] })
      const row = loadTicket('webauthn_register', input.ticket)
      if (row.userId !== me.userId) throw invalidTicket()
      const firstFactor = !mfaEnabled(me.userId)
      const created = await registerCredential(me.userId, row.challenge!, name, input.credential)
      if (!created) throw wrongCode(row)
      redeemTicket(row)
      const backup_codes = firstFactor ? await regenerateBackupCodes(me.userId) : undefined
      if (firstFactor) userChanged(me.userId)
      return { ...authenticatorView(created), ...(backup_codes ? { backup_codes } : {}) }
    },
    { auth: 'user', ...tags('Start (no body) or finish registering a security key') },
  )
  .get('/users/@me/mfa/webauthn/credentials', ({ caller }) => credentialsOf(userCaller(caller).userId).map(authenticatorView), {
    auth: 'user',
    ...tags('Security keys'),
  })
  .patch(
    '/users/@me/mfa/webauthn/credentials/:id',
    ({ caller, params, body }) => {
      const renamed = renameCredential(userCaller(caller).userId, params.id, body.name.trim())
      if (!renamed) throw Errors.notFound()
      return authenticatorView(renamed)
    },
    { auth: 'user', body: t.Object({ name: t.String({ minLength: 1, maxLength: 32 }) }), ...tags('Rename a security key') },
  )
  .delete(
    '/users/@me/mfa/webauthn/credentials/:id',
    async ({ caller, params, request }) => {
      const me = userCaller(caller)
      if (!credentialsOf(me.userId).some((c) => c.id === params.id)) throw Errors.notFound()
      await requireElevation(me, request)
      if (!removeCredential(me.userId, params.id)) throw Errors.notFound()
      dropDependentFactors(me.userId)
      if (!hasWebauthn(me.userId)) userChanged(me.userId)
      return noContent()
    },
    { auth: 'user', ...tags('Remove a security key (elevated)') },
  )
