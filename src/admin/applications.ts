// The console's applications: the list (as `app list`, no secret), creation (as `app create`), the rotation of the
// bot token and the client secret (shown once; the old one refused at once on every node: the token cache's
// forgetting is shared, oauth2/store.ts; the bot's sockets close), the event webhooks URL (PINGed before it is taken,
// as `app set`), a test PING with its answer, and the delivery log (the outbox rows still to deliver). Every change
// is audited in its own transaction. A lock and an unlock (`app lock`), audited.
import { Errors } from '../core/errors'
import { ownedToken, randomToken, sha256Hex } from '../core/crypto'
import { transaction } from '../db/client'
import { events } from '../gateway/bus'
import { eventDeliveriesOfApplication } from '../lobbies/console-store'
import { createApplication } from '../oauth2/applications'
import { EventWebhookStatus, pingEventWebhooks, verifyEventWebhooksUrl } from '../oauth2/event-webhooks'
import { setApplicationLock } from '../oauth2/revocation'
import { findApplication, listApplications, setApplicationSecretHashes, setEventWebhooks } from '../oauth2/store'
import type { ApplicationRow } from '../oauth2/tables'
import { type Actor, audit } from './audit'
import { notConfirmed } from './errors'

function applicationView(a: ApplicationRow) {
  return {
    id: a.id,
    name: a.name,
    bot_user_id: a.botUserId,
    redirect_uris: a.redirectUris,
    event_webhooks_url: a.eventWebhooksUrl,
    event_webhooks_status: a.eventWebhooksStatus,
    created_at: new Date(a.createdAt).toISOString(),
  }
}

export async function applicationList() {
  return (await listApplications()).map(applicationView)
}

export async function createApp(actor: Actor, name: string, redirectUris: string[], reason: string | undefined) {
  return await transaction(async () => {
    const created = await createApplication(name.trim(), redirectUris)
    await audit(actor, { action: 'application.create', targetType: 'application', targetId: created.id, reason })
    return created
  })
}

async function applicationOrThrow(id: string): Promise<ApplicationRow> {
  const app = /^\d{1,20}$/.test(id) ? await findApplication(id) : undefined
  if (!app) throw Errors.unknownApplication()
  return app
}

/**
 * A new bot token or client secret, shown once. The operator typed the application's name to confirm. A new bot
 * token closes the bot's Gateway sockets (as Discord's reset does): they were opened with the old one.
 */
export async function rotateSecret(
  actor: Actor,
  id: string,
  which: 'bot_token' | 'client_secret',
  confirm: string,
  reason: string | undefined,
) {
  const app = await applicationOrThrow(id)
  if (confirm.trim() !== app.name.trim()) throw notConfirmed()
  const fresh = which === 'bot_token' ? ownedToken(app.botUserId) : randomToken(32)
  await transaction(async () => {
    const hash = sha256Hex(fresh)
    await setApplicationSecretHashes(id, which === 'bot_token' ? { botTokenHash: hash } : { clientSecretHash: hash })
    if (which === 'bot_token') events.closeUser(app.botUserId, 4004, 'Authentication failed')
    await audit(actor, {
      action: which === 'bot_token' ? 'application.bot_token_reset' : 'application.client_secret_reset',
      targetType: 'application',
      targetId: id,
      reason,
    })
  })
  return { id, [which]: fresh } as { id: string; bot_token?: string; client_secret?: string }
}

/** Set the event webhooks URL (PINGed first: refused unless it answers 2xx) or, with null, turn them off. */
export async function setWebhookUrl(actor: Actor, id: string, url: string | null, reason: string | undefined) {
  await applicationOrThrow(id)
  // The PING before the transaction (a network call never holds the write lock); the change and its row in one.
  const checked = url === null ? null : await verifyEventWebhooksUrl(id, url)
  await transaction(async () => {
    await setEventWebhooks(id, checked, checked === null ? EventWebhookStatus.DISABLED : EventWebhookStatus.ENABLED)
    await audit(actor, {
      action: 'application.webhook_url',
      targetType: 'application',
      targetId: id,
      reason,
      details: { event_webhooks_url: checked },
    })
  })
  return applicationView(await applicationOrThrow(id))
}

/** PING the URL as set now and say what it answered; nothing changes but the audit row. */
export async function pingWebhook(actor: Actor, id: string) {
  await applicationOrThrow(id)
  const answer = await pingEventWebhooks(id)
  await audit(actor, {
    action: 'application.webhook_ping',
    targetType: 'application',
    targetId: id,
    details: { ok: answer.ok, latency_ms: answer.latency_ms, ...(answer.ok ? {} : { error: answer.error }) },
  })
  return { ok: answer.ok, url: answer.url, latency_ms: answer.latency_ms, error: answer.ok ? null : answer.error }
}

/** The delivery log: the events still to deliver (a delivered one leaves the outbox), with attempts and last error. */
export async function deliveryLog(id: string, limit: number) {
  await applicationOrThrow(id)
  return (await eventDeliveriesOfApplication(id, limit)).map((d) => {
    let type: string | null = null
    try {
      type = (JSON.parse(d.body) as { event?: { type?: string } }).event?.type ?? null
    } catch {}
    return {
      id: String(d.id),
      lobby_id: d.lobbyId,
      event_type: type,
      status: d.attempts === 0 ? 'queued' : 'retrying',
      attempts: d.attempts,
      last_error: d.lastError,
      created_at: new Date(d.createdAt).toISOString(),
      next_attempt_at: new Date(d.nextAttemptAt).toISOString(),
      failing_since: d.failingSince === null ? null : new Date(d.failingSince).toISOString(),
    }
  })
}

/** Lock or unlock an application (oauth2/revocation.ts) with its audit row, in one transaction. */
export async function lockApplication(actor: Actor, id: string, locked: boolean) {
  return await transaction(async () => {
    if (!(await setApplicationLock(id, locked))) throw new Error(`no application with id ${id}`)
    await audit(actor, {
      action: locked ? 'application.lock' : 'application.unlock',
      targetType: 'application',
      targetId: id,
    })
    return { id, locked }
  })
}
