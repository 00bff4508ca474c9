// The lobby events an application receives on its event webhooks (LOBBY_MESSAGE_CREATE, LOBBY_MESSAGE_UPDATE),
// through a durable outbox: the event is a row written in the transaction that made it (so a crash after the commit
// loses nothing, and a rolled-back change sends nothing), sent by a worker, deleted once the application's URL took
// it with a 2xx. At least once, in order per lobby (a lobby's next event waits for the one before it), with
// exponential backoff (1 s, doubling, at most a minute between attempts) for as long as the lobby exists; a deleted
// lobby's undelivered events go with it (foreign key). oauth2/event-webhooks.ts signs and sends.
//
// Where an event goes is decided when it is sent, not when it is queued: the lobby's `override_event_webhooks_url`
// if it has one, else the application's URL. So a change of the override (or of the application's URL) takes the
// lobby's queued events with it, in order (a change of the override makes them due at once, with a fresh backoff),
// and a lobby whose events have nowhere left to go (override cleared, application URL off) drops them.
import { perApp } from '../core/app-context'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { collect } from '../core/metrics'
import type { DB } from '../db/client'
import { sendApplicationEvent, verifyEventWebhooksUrl, checkWebhookUrl } from '../oauth2/event-webhooks'
import { cachedEventWebhookUrl } from '../oauth2/store'
import {
  countEventDeliveries,
  deleteEventDelivery,
  dropLobbyEventDeliveries,
  dueEventDeliveries,
  enqueueEventDelivery,
  failEventDelivery,
  cachedLobby,
} from './store'
import type { LobbyRow } from './tables'

const OVERRIDE_FIELD = 'override_event_webhooks_url'

/**
 * A URL a lobby's events may be sent to instead of the application's: the SSRF guard, then a signed PING answered
 * 2xx within EVENT_WEBHOOK_TIMEOUT_MS, as for the application's URL. Not PINGed again when it already is the lobby's
 * override (`current`) or the application's own (verified) URL. Throws 400 50035 naming the field.
 */
export async function verifyOverrideUrl(applicationId: string, url: string, current?: string | null): Promise<void> {
  if (url === current || new URL(url).toString() === (await cachedEventWebhookUrl(applicationId))) {
    await checkWebhookUrl(url, OVERRIDE_FIELD)
    return
  }
  await verifyEventWebhooksUrl(applicationId, url, OVERRIDE_FIELD)
}

const TICK_MS = 500
const BATCH = 64
const FIRST_RETRY_MS = 1000
const MAX_RETRY_MS = 60_000

/** What this module holds per service (core/app-context.ts). */
const held = perApp(() => ({
  delivered: 0,
  failedAttempts: 0,
  timer: undefined as ReturnType<typeof setInterval> | undefined,
  running: undefined as Promise<void> | undefined,
  again: false,
}))

/**
 * Queue an event for the lobby application's webhooks inside the transaction `tx`, when the lobby has an override
 * URL or the application has its webhooks enabled (a cached lookup). `data` makes the event's data, called only then.
 * Call `kickEventDeliveries()` after the commit.
 */
export async function queueLobbyEvent(
  tx: DB,
  lobby: Pick<LobbyRow, 'id' | 'applicationId' | 'overrideEventWebhooksUrl'>,
  type: string,
  data: () => unknown,
) {
  if (!lobby.overrideEventWebhooksUrl && !(await cachedEventWebhookUrl(lobby.applicationId))) return false
  const now = clock.now()
  const body = JSON.stringify({
    version: 1,
    application_id: lobby.applicationId,
    type: 1,
    event: { type, timestamp: new Date(now).toISOString(), data: data() },
  })
  await enqueueEventDelivery(tx, { lobbyId: lobby.id, applicationId: lobby.applicationId, body, now })
  return true
}

/** Send what is due now (after a commit that queued events); a run in progress runs once more. */
export function kickEventDeliveries(): void {
  const st = held()
  if (st.running !== undefined) {
    st.again = true
    return
  }
  st.running = deliverDue()
    .catch((error) => log.error('event webhooks delivery failed', { error: String(error) }))
    .finally(() => {
      st.running = undefined
      if (st.again) {
        st.again = false
        kickEventDeliveries()
      }
    })
}

/** One pass: the head of every lobby's queue that is due, sent in parallel; repeats while sends succeed. */
async function deliverDue(): Promise<void> {
  const st = held()
  for (;;) {
    const due = await dueEventDeliveries(clock.now(), BATCH)
    if (due.length === 0) return
    let progressed = false
    await Promise.all(
      due.map(async (row) => {
        const lobby = await cachedLobby(row.lobbyId)
        const override = lobby?.overrideEventWebhooksUrl ?? null
        if (!lobby || (!override && !(await cachedEventWebhookUrl(row.applicationId)))) {
          // Nowhere to go any more (the override cleared, the application's URL turned off, the lobby gone): what
          // was queued for the lobby is dropped.
          await dropLobbyEventDeliveries(row.lobbyId)
          return
        }
        const result = await sendApplicationEvent(row.applicationId, row.body, override)
        if (result.ok) {
          await deleteEventDelivery(row.id)
          st.delivered++
          progressed = true
          return
        }
        st.failedAttempts++
        const wait = Math.min(FIRST_RETRY_MS * 2 ** row.attempts, MAX_RETRY_MS)
        await failEventDelivery(row.id, row.attempts + 1, clock.now() + wait, result.error)
        if (row.attempts === 0)
          log.warn('event webhook failed', {
            application: row.applicationId,
            lobby: row.lobbyId,
            override: override !== null,
            error: result.error,
          })
      }),
    )
    if (!progressed) return
  }
}

/** The worker: a pass every half second (retries come due), and at once after each commit that queued an event. */
export function startEventDeliveries(): void {
  const st = held()
  collect(
    'lobby_event_webhooks_delivered_total',
    'Application event webhooks st.delivered (2xx).',
    'counter',
    () => st.delivered,
  )
  collect(
    'lobby_event_webhooks_failed_attempts_total',
    'Application event webhook calls that failed (status, timeout, network); each is retried.',
    'counter',
    () => st.failedAttempts,
  )
  collect(
    'lobby_event_webhooks_pending',
    'Application event webhooks waiting in the outbox.',
    'gauge',
    countEventDeliveries,
  )
  st.timer ??= setInterval(kickEventDeliveries, TICK_MS)
  kickEventDeliveries()
}

export async function stopEventDeliveries(): Promise<void> {
  const st = held()
  clearInterval(st.timer)
  st.timer = undefined
  await st.running
}

/** Tests: wait for the pass in progress. */
export const eventDeliveriesIdle = () => held().running ?? Promise.resolve()
