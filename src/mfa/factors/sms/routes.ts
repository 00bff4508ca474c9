// SMS: text a code for a ticket; turn the factor on (password; a verified phone and a strong factor needed) and off
// (password, elevated).
import { confirmPassword } from '../../../accounts/passwords'
import { perIp, reserve } from '../../../core/ratelimit'
import { clientIp } from '../../../http/client-ip'
import { NO_CONTENT } from '../../../http/docs'
import { endpoint } from '../../../http/endpoint'
import { noContent } from '../../../http/respond'
import { accountOf } from '../../caller'
import { smsCannotBeEnabled, smsNotEnabled } from '../../errors'
import type { FactorRoutesContext } from '../../factor'
import { PasswordSchema } from '../../schemas'
import { deleteSmsFactor, hasSmsFactor, insertSmsFactor } from '../../store'
import { MFA_PER_IP } from '../../tickets'
import { MaskedPhoneAnswer, TicketSchema } from './schemas'
import { anyTicket, sendTicketSms } from './send'

export const smsEndpoints = (mfa: FactorRoutesContext) => [
  endpoint(
    {
      method: 'POST',
      path: '/auth/mfa/sms/send',
      auth: null,
      tag: 'mfa',
      summary: 'Text a login code for an MFA ticket',
      body: TicketSchema,
      answers: { 200: MaskedPhoneAnswer },
    },
    async ({ request, server, body }) => {
      const ip = clientIp(request, server)
      await reserve(perIp('mfa-sms-ip', ip, MFA_PER_IP))
      const row = await anyTicket(body.ticket, ['login', 'reset', 'elevate'])
      return { phone: await sendTicketSms(row, ip) }
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/sms/enable',
      auth: 'user',
      tag: 'mfa',
      summary: 'Enable SMS as a second factor',
      body: PasswordSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, body }) => {
      const account = await accountOf(me.userId)
      await confirmPassword(account, body.password)
      // SMS only comes on top of a stronger factor, and needs a verified phone.
      if (!(await mfa.enabled(me.userId)) || !account.phone) throw smsCannotBeEnabled()
      await insertSmsFactor(me.userId)
      return noContent()
    },
  ),
  endpoint(
    {
      method: 'POST',
      path: '/users/@me/mfa/sms/disable',
      auth: 'user',
      tag: 'mfa',
      summary: 'Disable SMS as a second factor (elevated)',
      body: PasswordSchema,
      answers: { 204: NO_CONTENT },
    },
    async ({ caller: me, request, body }) => {
      await confirmPassword(await accountOf(me.userId), body.password)
      if (!(await hasSmsFactor(me.userId))) throw smsNotEnabled()
      await mfa.requireElevation(me, request)
      await deleteSmsFactor(me.userId)
      return noContent()
    },
  ),
]
