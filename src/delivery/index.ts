// Sends e-mail and SMS. Without SMTP_URL / SMS_WEBHOOK_URL, messages land in the outbox table and a log line.
// The accounts domain adds the SMTP and webhook transports; callers only use sendEmail/sendSms.
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { type CommitHolder, holdForCommit } from '../db/client'
import { log } from '../core/log'
import { snowflake } from '../core/snowflake'
import { claimPendingOutbox, insertOutbox, outboxRows, settleOutbox } from './store'
import type { OutboxRow } from './tables'

export type Email = { to: string; subject: string; text: string }
export type Sms = { to: string; body: string }

type Transport<M> = (message: M) => Promise<void>
/** What this module holds per App (core/app.ts). */
const newTransports = () => ({
  transports: {} as { email?: Transport<Email>; sms?: Transport<Sms> },
  /** Deliveries under way (callers often do not wait for a mail: a reset answers before its mail is written). */
  underWay: new Set<Promise<void>>(),
})
declare module '../core/app' {
  interface AppState {
    transports: ReturnType<typeof newTransports>
  }
}
const held = appState('transports', newTransports)

export function setTransports(next: { email?: Transport<Email>; sms?: Transport<Sms> }): void {
  const st = held()
  Object.assign(st.transports, next)
}

type Channel = 'email' | 'sms'
/** A message written in a transaction, to be handed to its transport once that transaction commits. */
type Pending = { id: string; channel: Channel; to: string; subject: string | null; body: string }

/** The transport's answer as a row status; a delivered message's links are live credentials: its body is dropped. */
async function send<M>(channel: Channel, transport: Transport<M>, message: M, to: string): Promise<'sent' | 'failed'> {
  try {
    await transport(message)
    return 'sent'
  } catch (error) {
    log.error(`${channel} delivery failed`, { to, error: String(error) })
    return 'failed'
  }
}

async function deliver<M>(
  channel: Channel,
  to: string,
  subject: string | null,
  body: string,
  transport: Transport<M> | undefined,
  message: M,
) {
  const id = snowflake()
  // Inside a transaction the message is a row of it, committed with the change it reports (an e-mail change and its
  // revert link): with a transport, 'pending' until the COMMIT hands it over (retried by the sweep after a crash).
  if (transport && holdForCommit(handOver, { id, channel, to, subject, body })) {
    await insertOutbox({ id, channel, to, subject, body, status: 'pending', createdAt: clock.now() })
    return
  }
  const status = transport ? await send(channel, transport, message, to) : 'stored'
  const kept = status === 'sent' ? DELIVERED : body
  await insertOutbox({ id, channel, to, subject, body: kept, status, createdAt: clock.now() })
  log.info(`${channel} ${status}`, { to, subject: subject ?? '' })
}

const DELIVERED = '(delivered; body not kept)'

/** Hand a committed pending message to its transport and record the answer. */
async function handOverOne(p: Pending): Promise<void> {
  const { transports } = held()
  const status =
    p.channel === 'email'
      ? await send('email', transports.email!, { to: p.to, subject: p.subject ?? '', text: p.body }, p.to)
      : await send('sms', transports.sms!, { to: p.to, body: p.body }, p.to)
  await settleOutbox(p.id, status, status === 'sent' ? DELIVERED : p.body)
  log.info(`${p.channel} ${status}`, { to: p.to, subject: p.subject ?? '' })
}

const handOver: CommitHolder<Pending> = {
  after(items) {
    for (const p of items) void track(handOverOne(p))
  },
}

/**
 * The sweep: messages committed 'pending' whose hand-over a crash cut off (older than a minute), each claimed once
 * (several nodes may sweep) and handed to its transport now.
 */
export async function retryPendingMessages(): Promise<void> {
  const { transports } = held()
  for (const row of await claimPendingOutbox(clock.now() - 60_000)) {
    if (!(row.channel === 'email' ? transports.email : transports.sms)) {
      await settleOutbox(row.id, 'stored', row.body)
      continue
    }
    await track(handOverOne(row))
  }
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
