// SMS as a second factor: a code texted to the account's verified phone for a ticket (keyed to that ticket, so a code
// texted for one ticket fails on another). It only comes on top of a strong factor (60012 otherwise), authenticator
// type 3, and it is the phone's: removing the phone removes it.
import { cachedUser } from '../../../accounts/store'
import { verifyPhoneCode } from '../../../accounts/phone'
import type { SecondFactor } from '../../factor'
import { AuthenticatorType, deleteSmsFactor, hasSmsFactor } from '../../store'
import { smsEndpoints } from './routes'
import { ticketPurpose } from './send'

export const sms: SecondFactor = {
  type: 'sms',
  authenticatorType: AuthenticatorType.SMS,
  strong: false,
  onPhone: true,
  page: { label: 'Text message', prompt: 'Six-digit code from the text message', input: 'digits', send: true },
  enrolled: hasSmsFactor,
  async verify(ticket, code) {
    const userId = ticket.userId!
    const phone = (await cachedUser(userId))?.phone
    return !!phone && (await hasSmsFactor(userId)) && verifyPhoneCode(phone, code, ticketPurpose(ticket))
  },
  remove: deleteSmsFactor,
  endpoints: smsEndpoints,
}
