// Texting a login code for a ticket (login, password reset or elevation) to the account's phone.
import { isE164, issuePhoneCode, maskPhone } from '../../../accounts/phone'
import { cachedUser } from '../../../accounts/store'
import { invalidTicket, smsNotEnabled } from '../../errors'
import { hasSmsFactor } from '../../store'
import { loadTicket, type TicketPurpose, type TicketRow } from '../../tickets'

/** The code's purpose in phone_codes: bound to the ticket, so a code texted for one ticket fails on another. */
export const ticketPurpose = (row: TicketRow) => `mfa:${row.ticketHash.slice(0, 32)}` as const

/** Text a code for this ticket to the user's phone; returns the masked number. */
export async function sendTicketSms(row: TicketRow, ip: string): Promise<string> {
  const user = await cachedUser(row.userId!)
  if (!user?.phone || !isE164(user.phone) || !(await hasSmsFactor(user.id))) throw smsNotEnabled()
  await issuePhoneCode(user.phone, ticketPurpose(row), ip, 'Your login code is')
  return maskPhone(user.phone)
}

/** A live ticket of any of these purposes, or 60006. */
export async function anyTicket(ticket: string, purposes: TicketPurpose[]): Promise<TicketRow> {
  for (const p of purposes) {
    try {
      return await loadTicket(p, ticket)
    } catch {}
  }
  throw invalidTicket()
}
