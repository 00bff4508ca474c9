// The identity providers an application trusts for POST /partner-sdk/token (`app auth-provider add|list|remove`):
// OIDC only, an issuer URL (http(s), no credentials, no query or fragment: the `iss` its ID tokens carry) and the
// audience its ID tokens are for (the application's client id at that provider). One provider per issuer per
// application.
import { clock } from '../core/clock'
import { snowflake } from '../core/snowflake'
import { uniqueViolation } from '../db/errors'
import { webhookUrlProblem } from '../oauth2/event-webhooks'
import { findApplication } from '../oauth2/store'
import { deleteProvider, insertProvider, listProviders } from './store'
import type { ExternalAuthProviderRow } from './tables'

/** An operator's mistake: the CLI prints the message. */
export class ProviderRefused extends Error {}

export type ProviderView = { id: string; application_id: string; type: 'oidc'; issuer: string; audience: string }

const view = (p: ExternalAuthProviderRow): ProviderView => ({
  id: p.id,
  application_id: p.applicationId,
  type: p.type,
  issuer: p.issuer,
  audience: p.audience,
})

export async function addProvider(input: {
  applicationId: string
  type: string
  issuer: string
  audience: string
}): Promise<ProviderView> {
  if (input.type.toLowerCase() !== 'oidc')
    throw new ProviderRefused(
      `--type ${input.type}: only oidc is served (Steam, EOS and Unity need their vendors' services)`,
    )
  if (!(await findApplication(input.applicationId)))
    throw new ProviderRefused(`no application with id ${input.applicationId}`)
  const problem = webhookUrlProblem(input.issuer)
  if (problem) throw new ProviderRefused(`--issuer: ${problem.message}`)
  const url = new URL(input.issuer)
  if (url.search || url.hash) throw new ProviderRefused('--issuer: no query or fragment (OpenID Connect Discovery 3)')
  if (input.issuer.length > 2048) throw new ProviderRefused('--issuer: at most 2048 characters')
  const audience = input.audience.trim()
  if (audience.length === 0 || audience.length > 255) throw new ProviderRefused('--audience: 1 to 255 characters')
  const row: ExternalAuthProviderRow = {
    id: snowflake(),
    applicationId: input.applicationId,
    type: 'oidc',
    issuer: input.issuer,
    audience,
    createdAt: clock.now(),
  }
  try {
    await insertProvider(row)
  } catch (error) {
    if (uniqueViolation(error)) throw new ProviderRefused(`the application already has a provider for ${input.issuer}`)
    throw error
  }
  return view(row)
}

export async function providersOf(applicationId?: string): Promise<ProviderView[]> {
  return (await listProviders(applicationId)).map(view)
}

export async function removeProvider(id: string): Promise<{ id: string; removed: true }> {
  if (!(await deleteProvider(id))) throw new ProviderRefused(`no provider with id ${id}`)
  return { id, removed: true }
}
