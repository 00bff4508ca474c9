// The lobby events an application receives on its event webhooks (LOBBY_MESSAGE_CREATE, LOBBY_MESSAGE_UPDATE),
// through a durable outbox: the event is a row written in the transaction that made it (so a crash after the commit
// loses nothing, and a rolled-back change sends nothing), sent by a worker, deleted once the application's URL took
// it with a 2xx. At least once, in order per lobby (a lobby's next event waits for the one before it), with
// exponential backoff (1 s, doubling, at most a minute between attempts) until the stop rule (stopDestination); a
// deleted lobby's undelivered events go with it (foreign key). oauth2/event-webhooks.ts signs and sends.
//
// One application's slow or dead URL must not delay another's events (issue 40): a pass reads the due lobby heads
// each application's in turn (event-deliveries-store.ts dueEventDeliveries), starts a call for each that the caps (per
// node, per application, per endpoint) and the endpoint's breaker (webhook-breakers.ts) allow, and does not wait for
// them: each call that ends runs another pass. A node claims a row before it sends it, so on several nodes one node sends each
// event; a claim outlives its call by CLAIM_MARGIN_MS, then another node takes the row over (its node died).
//
// Where an event goes is decided when it is sent, not when it is queued: the lobby's `override_event_webhooks_url`
// if it has one, else the application's URL. So a change of the override (or of the application's URL) takes the
// lobby's queued events with it, in order (a change of the override makes them due at once, with a fresh backoff),
// and a lobby whose events have nowhere left to go (override cleared, application URL off) drops them.
import { randomUUID } from 'node:crypto'
import { config } from '../config'
import { appState } from '../core/app'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { collect } from '../core/metrics'
import type { DB } from '../db/client'
import { sendApplicationEvent, verifyEventWebhooksUrl, checkWebhookUrl } from '../oauth2/event-webhooks'
import { cachedEventWebhookUrl, disableFailingEventWebhooks } from '../oauth2/store'
import { cachedLobby } from './store'
import {
  claimEventDeliveries,
  clearFailingOverride,
  countEventDeliveries,
  deleteEventDelivery,
  dropLobbyEventDeliveries,
  dueEventDeliveries,
  enqueueEventDelivery,
  failEventDelivery,
  parkEventDeliveries,
  releaseEventDeliveryClaims,
} from './event-deliveries-store'
import type { LobbyEventDeliveryRow, LobbyRow } from './tables'
import { Endpoints } from './webhook-breakers'

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
/** Due heads read per pass (each application's first ones come first: dueEventDeliveries). */
const PAGE = 256
/** Calls in flight on a node, in all; to one application's URLs; to one endpoint (a URL's origin). */
const MAX_IN_FLIGHT = 128
const PER_APP = 16
const PER_ENDPOINT = 16
const FIRST_RETRY_MS = 1000
const MAX_RETRY_MS = 60_000
/** A claim outlives the call it is for (EVENT_WEBHOOK_TIMEOUT_MS) by this much; a node that died is taken over. */
const CLAIM_MARGIN_MS = 5_000
/** The stop rule: an event that failed at every attempt for this long stops its URL (see the top). */
export const STOP_AFTER_MS = 60 * 60_000

type Destination = { url: string; origin: string; override: boolean }

/** What this module holds per App (core/app.ts). */
const newEventWebhooks = () => ({
  delivered: 0,
  failedAttempts: 0,
  stopped: 0,
  timer: undefined as ReturnType<typeof setInterval> | undefined,
  /** The pass that reads due rows and starts their calls (one at a time; `again`: once more after it). */
  running: undefined as Promise<void> | undefined,
  again: false,
  /** Stopping (the service shuts down): no new pass. */
  stopping: false,
  /** This node's name on the rows it claims. */
  owner: randomUUID(),
  /** The calls in flight, by row id, and how many per application. */
  sending: new Map<number, Promise<void>>(),
  perApp: new Map<string, number>(),
  endpoints: new Endpoints(),
})
declare module '../core/app' {
  interface AppState {
    eventWebhooks: ReturnType<typeof newEventWebhooks>
  }
}
const held = appState('eventWebhooks', newEventWebhooks)

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

/** Start what is due now (after a commit that queued events, after a call ended); a pass in progress runs again. */
export function kickEventDeliveries(): void {
  const st = held()
  if (st.stopping) return
  if (st.running !== undefined) {
    st.again = true
    return
  }
  st.running = startDue()
    .catch((error) => log.error('event webhooks delivery failed', { error: String(error) }))
    .finally(() => {
      st.running = undefined
      if (st.again) {
        st.again = false
        kickEventDeliveries()
      }
    })
}

/** Where a row's event goes now, or null: nowhere (the lobby gone, no override, the application's URL off). */
async function destinationOf(row: LobbyEventDeliveryRow): Promise<Destination | null> {
  const lobby = await cachedLobby(row.lobbyId)
  if (!lobby) return null
  const url = lobby.overrideEventWebhooksUrl ?? (await cachedEventWebhookUrl(row.applicationId))
  if (!url) return null
  let origin: string
  try {
    origin = new URL(url).origin
  } catch {
    origin = url
  }
  return { url, origin, override: lobby.overrideEventWebhooksUrl !== null }
}

const failedTooLong = (row: LobbyEventDeliveryRow, now: number) =>
  row.failingSince !== null && row.failingSince <= now - STOP_AFTER_MS

/**
 * One pass: read the due heads (each application's in turn), start a call for each one the caps and the breakers
 * allow (claimed first, so no other node sends it), park those whose endpoint is open, and do not wait for the calls:
 * each one that ends starts another pass.
 */
async function startDue(): Promise<void> {
  const st = held()
  for (;;) {
    const free = MAX_IN_FLIGHT - st.sending.size
    if (free <= 0 || st.stopping) return
    const now = clock.now()
    const full = [...st.perApp].filter(([, n]) => n >= PER_APP).map(([app]) => app)
    const due = await dueEventDeliveries(now, PAGE, full)
    const picked: { row: LobbyEventDeliveryRow; to: Destination }[] = []
    const parked = new Map<number, number[]>()
    const apps = new Map<string, number>()
    const origins = new Map<string, number>()
    for (const row of due) {
      if (picked.length >= free) break
      if (st.sending.has(row.id)) continue // this node's call for it is still out (its claim ran out: a test clock)
      const app = (st.perApp.get(row.applicationId) ?? 0) + (apps.get(row.applicationId) ?? 0)
      if (app >= PER_APP) continue
      const to = await destinationOf(row)
      if (!to) {
        // Nowhere to go any more (the override cleared, the application's URL turned off, the lobby gone): what
        // was queued for the lobby is dropped.
        await dropLobbyEventDeliveries(row.lobbyId)
        continue
      }
      const gate = st.endpoints.gate(to.origin, now, PER_ENDPOINT)
      if (gate.kind === 'open') {
        if (failedTooLong(row, now)) await stopDestination(row, to)
        else parked.set(gate.until, [...(parked.get(gate.until) ?? []), row.id])
        continue
      }
      if (st.endpoints.inFlight(to.origin) + (origins.get(to.origin) ?? 0) >= gate.cap) continue
      picked.push({ row, to })
      apps.set(row.applicationId, (apps.get(row.applicationId) ?? 0) + 1)
      origins.set(to.origin, (origins.get(to.origin) ?? 0) + 1)
    }
    for (const [until, ids] of parked) await parkEventDeliveries(ids, until, now)
    if (picked.length === 0) return
    const claimed = await claimEventDeliveries(
      picked.map((p) => p.row.id),
      st.owner,
      now,
      now + config().eventWebhookTimeoutMs + CLAIM_MARGIN_MS,
    )
    const mine = new Set(claimed.map((r) => r.id))
    for (const { row, to } of picked) if (mine.has(row.id)) send(row, to)
    // Another node claimed them all first: what is left is read again on the next kick.
    if (mine.size === 0) return
  }
}

/** One call, not waited for: its row deleted (2xx) or given its next attempt, then another pass. */
function send(row: LobbyEventDeliveryRow, to: Destination): void {
  const st = held()
  st.perApp.set(row.applicationId, (st.perApp.get(row.applicationId) ?? 0) + 1)
  st.endpoints.started(to.origin)
  const done = (async () => {
    let ended = false
    try {
      const result = await sendApplicationEvent(row.applicationId, row.body, to.url)
      const now = clock.now()
      st.endpoints.ended(to.origin, result.ok, now)
      ended = true
      if (result.ok) {
        await deleteEventDelivery(row.id)
        st.delivered++
        return
      }
      st.failedAttempts++
      // Stopped only while its endpoint fails too (every call of late, not one event it refuses).
      if (failedTooLong(row, now) && st.endpoints.failing(to.origin)) {
        await stopDestination(row, to)
        return
      }
      const wait = Math.min(FIRST_RETRY_MS * 2 ** row.attempts, MAX_RETRY_MS)
      await failEventDelivery(row.id, st.owner, {
        attempts: row.attempts + 1,
        nextAttemptAt: now + wait,
        error: result.error,
        now,
      })
      if (row.attempts === 0)
        log.warn('event webhook failed', {
          application: row.applicationId,
          lobby: row.lobbyId,
          override: to.override,
          error: result.error,
        })
    } catch (error) {
      log.error('event webhook delivery failed', { error: String(error) })
    } finally {
      if (!ended) st.endpoints.ended(to.origin, false, clock.now())
      const n = (st.perApp.get(row.applicationId) ?? 1) - 1
      if (n > 0) st.perApp.set(row.applicationId, n)
      else st.perApp.delete(row.applicationId)
      st.sending.delete(row.id)
      kickEventDeliveries()
    }
  })()
  st.sending.set(row.id, done)
}

/**
 * The stop rule: the lobby's event failed at every attempt for STOP_AFTER_MS, and its endpoint fails too (open, or
 * failures in a row: an endpoint that takes other events while it refuses this one is not stopped). A lobby's override is cleared (its
 * events go to the application's URL again, or nowhere); the application's URL is turned off (status 3, "disabled by
 * Discord"; its lobbies' queued events are then dropped as they come up). Either way the lobby's queued events are
 * dropped. Setting the URL again (PINGed) turns it back on.
 */
async function stopDestination(row: LobbyEventDeliveryRow, to: Destination): Promise<void> {
  const st = held()
  const changed = to.override
    ? await clearFailingOverride(row.lobbyId, to.url)
    : await disableFailingEventWebhooks(row.applicationId, to.url)
  const dropped = await dropLobbyEventDeliveries(row.lobbyId)
  st.stopped++
  if (changed)
    log.warn('event webhooks stopped: the URL failed every call for too long', {
      application: row.applicationId,
      lobby: row.lobbyId,
      override: to.override,
      dropped,
      error: row.lastError,
    })
}

/** The worker: a pass every half second (retries come due), at once after each commit that queued an event. */
export function startEventDeliveries(): void {
  const st = held()
  collect(
    'lobby_event_webhooks_delivered_total',
    'Application event webhooks delivered (2xx).',
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
    'lobby_event_webhooks_stopped_total',
    'Event webhook URLs stopped after failing every call for an hour (an override cleared, an application disabled).',
    'counter',
    () => st.stopped,
  )
  collect(
    'lobby_event_webhooks_in_flight',
    'Application event webhook calls in flight on this node.',
    'gauge',
    () => st.sending.size,
  )
  collect(
    'lobby_event_webhooks_pending',
    'Application event webhooks waiting in the outbox.',
    'gauge',
    countEventDeliveries,
  )
  // Alone on its database (no cluster), what a killed process had claimed is due again at once.
  st.stopping = false
  const ready = config().redisUrl ? Promise.resolve() : releaseEventDeliveryClaims()
  void ready
    .catch((error) => log.error('event webhooks: releasing claims failed', { error: String(error) }))
    .then(() => {
      if (st.stopping) return
      st.timer ??= setInterval(kickEventDeliveries, TICK_MS)
      kickEventDeliveries()
    })
}

export async function stopEventDeliveries(): Promise<void> {
  const st = held()
  st.stopping = true
  clearInterval(st.timer)
  st.timer = undefined
  await eventDeliveriesIdle()
}

/** Tests (and stop): wait for the pass in progress and the calls in flight, and what they started. */
export async function eventDeliveriesIdle(): Promise<void> {
  const st = held()
  while (st.running !== undefined || st.sending.size > 0) await Promise.all([st.running, ...st.sending.values()])
}
