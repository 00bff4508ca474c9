// SMS: sending a login code for a ticket.
import { t } from 'elysia'
import { LOGIN_TICKET, Ticket } from '../../schemas'

export const TicketSchema = t.Object({ ticket: Ticket }, { examples: [{ ticket: LOGIN_TICKET }] })

export const MaskedPhoneAnswer = t.Object(
  { phone: t.String({ description: 'the masked number' }) },
  { description: 'Code sent' },
)
