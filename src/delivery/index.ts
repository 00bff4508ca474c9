// Sends e-mail and SMS. Without SMTP_URL / SMS_WEBHOOK_URL, messages land in the outbox table and a log line.
// The accounts domain adds the SMTP and webhook transports; callers only use sendEmail/sendSms.
import { perApp } from '../core/app-context'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { snowflake } from '../core/snowflake'
import { insertOutbox, outboxRows } from './store'
import type { OutboxRow } from './tables'

export type Email = { to: string; subject: string; text: string }
export type Sms = { to: string; body: string }

type Transport<M> = (message: M) => Promise<void>
/** What this module holds per service (core/app-context.ts). */
const held = perApp(() => ({
  transports: {} as { email?: Transport<Email>; sms?: Transport<Sms> },
  /** Deliveries under way (callers often do not wait for a mail: a reset answers before its mail is written). */
  underWay: new Set<Promise<void>>(),
}))

export function setTransports(next: { email?: Transport<Email>; sms?: Transport<Sms> }): void {
  const st = held()
  Object.assign(st.transports, next)
}

async function deliver<M>(
  channel: 'email' | 'sms',
  to: string,
  subject: string | null,
  body: string,
  transport: Transport<M> | undefined,
  message: M,
) {
  let status = 'stored'
  if (transport) {
    try {
      await transport(message)
      status = 'sent'
    } catch (error) {
      status = 'failed'
      log.error(`${channel} delivery failed`, { to, error: String(error) })
    }
  }
  // A delivered message's links are live credentials: keep them only while the outbox is the delivery.
  const kept = status === 'sent' ? '(delivered; body not kept)' : body
  await insertOutbox({ id: snowflake(), channel, to, subject, body: kept, status, createdAt: clock.now() })
  log.info(`${channel} ${status}`, { to, subject: subject ?? '' })
}

function track(delivery: Promise<void>): Promise<void> {
  const st = held()
  st.underWay.add(delivery)
  return delivery.finally(() => st.underWay.delete(delivery))
}

export function sendEmail(email: Email): Promise<void> {
  return track(deliver('email', email.to, email.subject, email.text, held().transports.email, email))
}

export function sendSms(sms: Sms): Promise<void> {
  return track(deliver('sms', sms.to, null, sms.body, held().transports.sms, sms))
}

/** The outbox, once the deliveries under way when asked are written: what was sent before is in it. */
export async function readOutbox(to?: string): Promise<OutboxRow[]> {
  await Promise.allSettled([...held().underWay])
  return await outboxRows(to)
}
