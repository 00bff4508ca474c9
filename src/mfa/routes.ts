// REST for MFA: login with a second factor, passwordless WebAuthn, elevation (/mfa/finish) and enrolment of TOTP,
// backup codes, SMS and security keys.
import { Elysia } from 'elysia'
import { clientInfo } from '../accounts/client-info'
import { phoneNumberInvalid, phoneVerificationInvalid } from '../accounts/errors'
import { completeLogin } from '../accounts/complete-login'
import { confirmPassword } from '../accounts/passwords'
import { isE164, isPhoneBlocked, issuePhoneCode, rememberPhone } from '../accounts/phone'
import { redeemOneTime } from '../accounts/one-time'
import { endSessions, replaceSession } from '../accounts/sessions'
import { Errors, formError } from '../core/errors'
import { perIp, reserve } from '../core/ratelimit'
import { transaction } from '../db/client'
import { events, topics } from '../gateway/bus'
import { clientIp } from '../http/client-ip'
import { identity, optionalCaller } from '../http/identity'
import { doc, NO_CONTENT } from '../http/docs'
import { noContent } from '../http/respond'
import { privateUser } from '../accounts/serialize'
import { findUser, findUserByPhone, updateUser } from '../accounts/store'
import type { UserRow } from '../accounts/tables'
import {
  listBackupCodes,
  newBackupCodes,
  regenerateBackupCodes,
  removeBackupCodes,
  storeBackupCodes,
} from './backup-codes'
import { ELEVATION_COOKIE, ELEVATION_TTL_S, requireElevation, signElevation } from './elevation'
import { hasSms, mfaEnabled, sendTicketSms, verifyFactor } from './factors'
import { finishMfaLogin } from './login'
import {
  AuthenticatorAnswer,
  AuthenticatorsAnswer,
  BackupCodesAnswer,
  CodesSchema,
  ConditionalFinishSchema,
  ConditionalStartAnswer,
  CredentialAnswer,
  CredentialSchema,
  ElevationSchema,
  LoggedIn,
  MaskedPhoneAnswer,
  MfaCodeSchema,
  MfaLoginAnswer,
  PasswordSchema,
  PhoneSchema,
  RenameSchema,
  TicketSchema,
  TokenAnswer,
  TotpEnableAnswer,
  TotpEnableSchema,
} from './schemas'
import { deleteSmsFactor, insertSmsFactor } from './store'
import {
  alreadyEnrolled,
  invalidCode,
  invalidSecret,
  invalidTicket,
  notEnrolled,
  phoneTaken,
  smsCannotBeEnabled,
  smsNotEnabled,
} from './errors'
import { issueTicket, loadTicket, redeemTicket, wrongCode, type TicketPurpose, type TicketRow } from './tickets'
import { matchingStep, parseSecret, removeTotp, saveTotp, hasTotp } from './totp'
import {
  authenticationOptions,
  authenticatorView,
  credentialsOf,
  hasWebauthn,
  registerCredential,
  registrationOptions,
  removeCredential,
  renameCredential,
  verifyAssertion,
} from './webauthn'
import { loginSettings } from '../accounts/settings'

type Ctx = { request: Request; server: { requestIP(r: Request): { address: string } | null } | null }
const ipOf = (ctx: Ctx) => clientIp(ctx.request, ctx.server)
const clientOf = (ctx: Ctx) => clientInfo(ctx.request, ipOf(ctx))
const MFA_PER_IP = { limit: 60, windowMs: 10 * 60_000 }

const userOf = async (id: string): Promise<UserRow> => {
  const user = await findUser(id)
  if (!user) throw Errors.unauthorized()
  return user
}
const userChanged = async (userId: string) =>
  events.publish(topics.account(userId), 'USER_UPDATE', privateUser(await userOf(userId), await mfaEnabled(userId)))

/** With no TOTP and no security key left, MFA is off: SMS and backup codes go with it. */
async function dropDependentFactors(userId: string) {
  if (await mfaEnabled(userId)) return
  await removeBackupCodes(userId)
  await deleteSmsFactor(userId)
}

export const mfaPublicRoutes = new Elysia()
  .post(
    '/auth/mfa/sms/send',
    async (ctx) => {
      reserve(perIp('mfa-sms-ip', ipOf(ctx), MFA_PER_IP))
      const row = await anyTicket(ctx.body.ticket, ['login', 'reset', 'elevate'])
      return { phone: await sendTicketSms(row, ipOf(ctx)) }
    },
    { body: TicketSchema, ...doc('mfa', 'Text a login code for an MFA ticket', { 200: MaskedPhoneAnswer }) },
  )
  .post(
    '/auth/mfa/:type',
    async (ctx) => {
      if (!['totp', 'sms', 'backup', 'webauthn'].includes(ctx.params.type)) throw Errors.notFound()
      reserve(perIp('mfa-ip', ipOf(ctx), MFA_PER_IP))
      const { ticket, code, login_source, gift_code_sku_id } = ctx.body
      const { token, user_settings, required_actions } = await finishMfaLogin(ctx.params.type, ticket, code, {
        client: clientOf(ctx),
        loginSource: login_source,
        giftCodeSkuId: gift_code_sku_id,
      })
      return { token, user_settings, ...(required_actions ? { required_actions } : {}) }
    },
    {
      body: MfaCodeSchema,
      ...doc('mfa', 'Finish a login with a second factor', { 200: MfaLoginAnswer }),
    },
  )
  .post(
    '/auth/conditional/start',
    async (ctx) => {
      // Already logged in: the client gets its token back, as the spec says.
      const caller = await optionalCaller(ctx.request)
      if (caller?.kind === 'user') {
        return {
          user_id: caller.userId,
          token: ctx.request.headers.get('authorization')!.trim(),
          user_settings: loginSettings(await userOf(caller.userId)),
        }
      }
      reserve(perIp('conditional-ip', ipOf(ctx), MFA_PER_IP))
      const options = await authenticationOptions(null, 'required')
      return {
        ticket: await issueTicket('conditional', null, { challenge: options.challenge }),
        challenge: options.json,
      }
    },
    doc('mfa', 'Start a passwordless WebAuthn login', { 200: ConditionalStartAnswer }),
  )
  .post(
    '/auth/conditional/finish',
    async (ctx) => {
      const row = await loadTicket('conditional', ctx.body.ticket)
      if (!(await redeemTicket(row))) throw invalidTicket() // one assertion per challenge
      const credential = await verifyAssertion(ctx.body.credential, row.challenge!, null)
      if (!credential) throw invalidCode()
      const user = await userOf(credential.userId)
      if (user.state !== 'active' || user.compromised) throw invalidCode()
      return await completeLogin(user, {
        client: clientOf(ctx),
        loginSource: ctx.body.login_source,
        giftCodeSkuId: ctx.body.gift_code_sku_id,
      })
    },
    {
      body: ConditionalFinishSchema,
      ...doc('mfa', 'Finish a passwordless WebAuthn login', { 200: LoggedIn }),
    },
  )

async function anyTicket(ticket: string, purposes: TicketPurpose[]): Promise<TicketRow> {
  for (const p of purposes) {
    try {
      return await loadTicket(p, ticket)
    } catch {}
  }
  throw invalidTicket()
}

export const mfaSessionRoutes = new Elysia()
  .use(identity)
  .post(
    '/mfa/finish',
    async ({ caller: me, body, cookie }) => {
      const row = await loadTicket('elevate', body.ticket)
      if (row.userId !== me.userId || row.sessionId !== me.sessionId) throw invalidTicket()
      await verifyFactor(row, body.mfa_type, body.data)
      if (!(await redeemTicket(row))) throw invalidTicket()
      const token = await signElevation(me)
      cookie[ELEVATION_COOKIE].set({
        value: token,
        secure: true,
        httpOnly: true,
        sameSite: 'strict',
        path: '/',
        maxAge: ELEVATION_TTL_S,
      })
      return { token }
    },
    {
      user: true,
      body: ElevationSchema,
      ...doc('mfa', 'Prove a factor; returns a 5-minute elevation token', { 200: TokenAnswer }),
    },
  )
  .post(
    '/users/@me/mfa/totp/enable',
    async ({ caller: me, body }) => {
      const account = await userOf(me.userId)
      await confirmPassword(account, body.password)
      if (await hasTotp(me.userId)) throw alreadyEnrolled()
      const secret = parseSecret(body.secret)
      if (!secret) throw invalidSecret()
      const step = matchingStep(secret, body.code.replace(/\s+/g, ''))
      if (step === undefined) throw invalidCode()
      // The secret and its backup codes commit together (codes hashed first): a crash never leaves TOTP on
      // without backup codes.
      const fresh = await newBackupCodes()
      const backup_codes = await transaction(async () => {
        if (!(await saveTotp(me.userId, secret, step))) throw alreadyEnrolled()
        return await storeBackupCodes(me.userId, fresh)
      })
      // New credentials, new token: every other session ends, this one continues under a new token.
      await endSessions(me.userId, me.sessionId)
      const token = await replaceSession(me)
      await userChanged(me.userId)
      return { token, backup_codes }
    },
    {
      user: true,
      body: TotpEnableSchema,
      ...doc('mfa', 'Enable TOTP', { 200: TotpEnableAnswer }),
    },
  )
  .post(
    '/users/@me/mfa/totp/disable',
    async ({ caller: me, request }) => {
      if (!(await hasTotp(me.userId))) throw notEnrolled()
      await requireElevation(me, request)
      await removeTotp(me.userId)
      await dropDependentFactors(me.userId)
      const token = await replaceSession(me)
      await userChanged(me.userId)
      return { token }
    },
    { user: true, ...doc('mfa', 'Disable TOTP (elevated)', { 200: TokenAnswer }) },
  )
  .post(
    '/users/@me/mfa/codes-verification',
    async ({ caller: me, request, body }) => {
      if (!(await mfaEnabled(me.userId))) throw notEnrolled()
      await requireElevation(me, request)
      return {
        backup_codes: body?.regenerate ? await regenerateBackupCodes(me.userId) : await listBackupCodes(me.userId),
      }
    },
    {
      user: true,
      body: CodesSchema,
      ...doc('mfa', 'View or regenerate backup codes (elevated)', { 200: BackupCodesAnswer }),
    },
  )
  .post(
    '/users/@me/mfa/sms/enable',
    async ({ caller: me, body }) => {
      const account = await userOf(me.userId)
      await confirmPassword(account, body.password)
      // SMS only comes on top of a stronger factor, and needs a verified phone.
      if (!(await mfaEnabled(me.userId)) || !account.phone) throw smsCannotBeEnabled()
      await insertSmsFactor(me.userId)
      return noContent()
    },
    { user: true, body: PasswordSchema, ...doc('mfa', 'Enable SMS as a second factor', { 204: NO_CONTENT }) },
  )
  .post(
    '/users/@me/mfa/sms/disable',
    async ({ caller: me, request, body }) => {
      await confirmPassword(await userOf(me.userId), body.password)
      if (!(await hasSms(me.userId))) throw smsNotEnabled()
      await requireElevation(me, request)
      await deleteSmsFactor(me.userId)
      return noContent()
    },
    {
      user: true,
      body: PasswordSchema,
      ...doc('mfa', 'Disable SMS as a second factor (elevated)', { 204: NO_CONTENT }),
    },
  )
  .post(
    '/users/@me/phone',
    async (ctx) => {
      const me = ctx.caller
      const body = ctx.body
      if (body.phone_token === undefined) {
        // Step one: text a code to the new number; /phone-verifications/verify turns it into a phone_token.
        if (!isE164(body.phone) || (await isPhoneBlocked(body.phone))) throw phoneNumberInvalid()
        await issuePhoneCode(body.phone, 'verify', ipOf(ctx))
        return noContent()
      }
      await confirmPassword(await userOf(me.userId), body.password)
      const row = await redeemOneTime('phone', body.phone_token)
      const phone = row?.data.phone
      if (!phone || row.data.purpose === 'reset' || (await isPhoneBlocked(phone))) throw phoneVerificationInvalid()
      const owner = await findUserByPhone(phone)
      if (owner && owner.id !== me.userId) throw phoneTaken()
      try {
        await updateUser(me.userId, { phone })
      } catch {
        throw phoneVerificationInvalid() // another account took it at the same moment
      }
      await rememberPhone(me.userId, phone)
      await userChanged(me.userId)
      return noContent()
    },
    {
      user: true,
      body: PhoneSchema,
      ...doc('mfa', 'Text a code to a new phone, or set the verified phone', { 204: NO_CONTENT }),
    },
  )
  .delete(
    '/users/@me/phone',
    async ({ caller: me, request, body }) => {
      await confirmPassword(await userOf(me.userId), body.password)
      if (await hasSms(me.userId)) {
        await requireElevation(me, request)
        await deleteSmsFactor(me.userId)
      }
      await updateUser(me.userId, { phone: null })
      await userChanged(me.userId)
      return noContent()
    },
    {
      user: true,
      body: PasswordSchema,
      ...doc('mfa', 'Remove the phone (elevated when it is a second factor)', { 204: NO_CONTENT }),
    },
  )
  .post(
    '/users/@me/mfa/webauthn/credentials',
    async ({ caller: me, body }) => {
      const input = (body ?? {}) as { ticket?: unknown; name?: unknown; credential?: unknown }
      if (input.ticket === undefined && input.credential === undefined) {
        const options = await registrationOptions(await userOf(me.userId))
        return {
          ticket: await issueTicket('webauthn_register', me.userId, { challenge: options.challenge }),
          challenge: options.json,
        }
      }
      const name = typeof input.name === 'string' ? input.name.trim() : ''
      if (name.length < 1 || name.length > 32)
        throw formError({ name: ['BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 32 in length.'] })
      const row = await loadTicket('webauthn_register', input.ticket)
      if (row.userId !== me.userId) throw invalidTicket()
      const firstFactor = !(await mfaEnabled(me.userId))
      const created = await registerCredential(me.userId, row.challenge!, name, input.credential)
      if (!created) throw await wrongCode(row)
      await redeemTicket(row)
      const backup_codes = firstFactor ? await regenerateBackupCodes(me.userId) : undefined
      if (firstFactor) await userChanged(me.userId)
      return { ...authenticatorView(created), ...(backup_codes ? { backup_codes } : {}) }
    },
    // The body is checked in the handler (a start has none): the schema documents it.
    {
      user: true,
      ...doc(
        'mfa',
        'Start (no body) or finish registering a security key',
        { 200: CredentialAnswer },
        { body: CredentialSchema },
      ),
    },
  )
  .get(
    '/users/@me/mfa/webauthn/credentials',
    async ({ caller }) => (await credentialsOf(caller.userId)).map(authenticatorView),
    {
      user: true,
      ...doc('mfa', 'Security keys', { 200: AuthenticatorsAnswer }),
    },
  )
  .patch(
    '/users/@me/mfa/webauthn/credentials/:id',
    async ({ caller, params, body }) => {
      const renamed = await renameCredential(caller.userId, params.id, body.name.trim())
      if (!renamed) throw Errors.notFound()
      return authenticatorView(renamed)
    },
    { user: true, body: RenameSchema, ...doc('mfa', 'Rename a security key', { 200: AuthenticatorAnswer }) },
  )
  .delete(
    '/users/@me/mfa/webauthn/credentials/:id',
    async ({ caller: me, params, request }) => {
      if (!(await credentialsOf(me.userId)).some((c) => c.id === params.id)) throw Errors.notFound()
      await requireElevation(me, request)
      if (!(await removeCredential(me.userId, params.id))) throw Errors.notFound()
      await dropDependentFactors(me.userId)
      if (!(await hasWebauthn(me.userId))) await userChanged(me.userId)
      return noContent()
    },
    { user: true, ...doc('mfa', 'Remove a security key (elevated)', { 204: NO_CONTENT }) },
  )
