// The console's applications: the list (as `app list`, no secret) and creation (as `app create`: the bot token and
// client secret are shown once), audited; a lock and an unlock (`app lock`), audited.
import { transaction } from '../db/client'
import { createApplication } from '../oauth2/applications'
import { setApplicationLock } from '../oauth2/revocation'
import { listApplications } from '../oauth2/store'
import { type Actor, audit } from './audit'

export async function applicationList() {
  return (await listApplications()).map((a) => ({
    id: a.id,
    name: a.name,
    bot_user_id: a.botUserId,
    redirect_uris: a.redirectUris,
    event_webhooks_url: a.eventWebhooksUrl,
    event_webhooks_status: a.eventWebhooksStatus,
    created_at: new Date(a.createdAt).toISOString(),
  }))
}

export async function createApp(actor: Actor, name: string, redirectUris: string[], reason: string | undefined) {
  const created = await createApplication(name.trim(), redirectUris)
  await audit(actor, { action: 'application.create', targetType: 'application', targetId: created.id, reason })
  return created
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
