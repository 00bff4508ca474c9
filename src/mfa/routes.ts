// REST for MFA: a login finished with any registered factor, elevation (/mfa/finish), the phone (a factor may stand on
// it), and each factor's own routes (enrolment, removal, ...), collected from the registry.
import { clientInfo } from '../accounts/client-info'
import { phoneNumberInvalid, phoneVerificationInvalid } from '../accounts/errors'
import { redeemOneTime } from '../accounts/one-time'
import { confirmPassword } from '../accounts/passwords'
import { isE164, isPhoneBlocked, issuePhoneCode } from '../accounts/phone'
import { findUserByPhone } from '../accounts/store'
import { Errors } from '../core/errors'
import { perIp, reserve } from '../core/ratelimit'
import { clientIp } from '../http/client-ip'
import { NO_CONTENT } from '../http/docs'
import { type Endpoint, endpoint } from '../http/endpoint'
import { json, noContent } from '../http/respond'
import { accountOf } from './caller'
import { elevationCookie, signElevation } from './elevation-jwt'
import { invalidTicket, phoneTaken } from './errors'
import type { FactorRoutesContext } from './factor'
import { finishMfaLogin } from './login'
import { removePhone, setPhone } from './phone'
import type { Registry } from './registry'
import {
  ElevationSchema,
  FactorTypeParam,
  MfaCodeSchema,
  MfaLoginAnswer,
  PasswordSchema,
  PhoneSchema,
  TokenAnswer,
} from './schemas'
import { loadTicket, MFA_PER_IP, redeemTicket } from './tickets'

/** The module's endpoints for a registry: MFA's own, then each factor's. */
export function mfaEndpoints(mfa: Registry): Endpoint[] {
  const context: FactorRoutesContext = {
    enabled: mfa.enabled,
    requireElevation: mfa.requireElevation,
    dropDependents: mfa.dropDependents,
    userChanged: mfa.userChanged,
  }
  return [
    endpoint(
      {
        method: 'POST',
        path: '/auth/mfa/:type',
        auth: null,
        tag: 'mfa',
        summary: 'Finish a login with a second factor',
        params: { type: FactorTypeParam(mfa.factors.map((f) => f.type)) },
        body: MfaCodeSchema,
        answers: { 200: MfaLoginAnswer },
      },
      async ({ request, server, params, body }) => {
        if (!mfa.factor(params.type)) throw Errors.notFound()
        const ip = clientIp(request, server)
        await reserve(perIp('mfa-ip', ip, MFA_PER_IP))
        const { ticket, code, login_source, gift_code_sku_id } = body
        const { token, user_settings, required_actions } = await finishMfaLogin(mfa, params.type, ticket, code, {
          client: clientInfo(request, ip),
          loginSource: login_source,
          giftCodeSkuId: gift_code_sku_id,
        })
        return { token, user_settings, ...(required_actions ? { required_actions } : {}) }
      },
    ),
    endpoint(
      {
        method: 'POST',
        path: '/mfa/finish',
        auth: 'user',
        tag: 'mfa',
        summary: 'Prove a factor; returns a 5-minute elevation token',
        body: ElevationSchema,
        answers: { 200: TokenAnswer },
      },
      async ({ caller: me, body }) => {
        const row = await loadTicket('elevate', body.ticket)
        if (row.userId !== me.userId || row.sessionId !== me.sessionId) throw invalidTicket()
        await mfa.verify(row, body.mfa_type, body.data)
        if (!(await redeemTicket(row))) throw invalidTicket()
        const token = await signElevation(me)
        return json({ token }, 200, { 'set-cookie': elevationCookie(token) })
      },
    ),
    endpoint(
      {
        method: 'POST',
        path: '/users/@me/phone',
        auth: 'user',
        tag: 'mfa',
        summary: 'Text a code to a new phone, or set the verified phone',
        body: PhoneSchema,
        answers: { 204: NO_CONTENT },
      },
      async ({ caller: me, request, server, body }) => {
        if (body.phone_token === undefined) {
          // Step one: text a code to the new number; /phone-verifications/verify turns it into a phone_token.
          if (!isE164(body.phone) || (await isPhoneBlocked(body.phone))) throw phoneNumberInvalid()
          await issuePhoneCode(body.phone, 'verify', clientIp(request, server))
          return noContent()
        }
        await confirmPassword(await accountOf(me.userId), body.password)
        const row = await redeemOneTime('phone', body.phone_token)
        const phone = row?.data.phone
        if (!phone || row.data.purpose === 'reset' || (await isPhoneBlocked(phone))) throw phoneVerificationInvalid()
        const owner = await findUserByPhone(phone)
        if (owner && owner.id !== me.userId) throw phoneTaken()
        await setPhone(mfa, me.userId, phone)
        return noContent()
      },
    ),
    endpoint(
      {
        method: 'DELETE',
        path: '/users/@me/phone',
        auth: 'user',
        tag: 'mfa',
        summary: 'Remove the phone (elevated when it is a second factor)',
        body: PasswordSchema,
        answers: { 204: NO_CONTENT },
      },
      async ({ caller: me, request, body }) => {
        await confirmPassword(await accountOf(me.userId), body.password)
        // The factors that prove this phone go with it, and need a fresh proof first.
        const onPhone = await mfa.phoneFactors(me.userId)
        if (onPhone.length) await mfa.requireElevation(me, request)
        await removePhone(mfa, me.userId, onPhone)
        return noContent()
      },
    ),
    ...mfa.factors.flatMap((f) => f.endpoints?.(context) ?? []),
  ]
}
