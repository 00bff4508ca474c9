// Discord's application objects: the partial one OAuth2 screens and /oauth2/@me show, and the whole one a bot reads
// of its own application (GET /applications/@me, /oauth2/applications/@me).
import { publicUser } from '../accounts/serialize'
import type { UserRow } from '../accounts/tables'
import type { ApplicationRow } from './tables'

export function publicApplication(app: ApplicationRow) {
  return {
    id: app.id,
    name: app.name,
    icon: null,
    description: '',
    summary: '',
    type: null,
    hook: true,
    bot_public: true,
    bot_require_code_grant: false,
    flags: app.flags,
  }
}

/**
 * Discord's application object for its own bot. `owner` is the account that owns the application; one made by the
 * operator (CLI, no owning account) names its bot user, since libraries require an owner (discord.py reads
 * `data['owner']`) and there is no team to name instead.
 */
export function currentApplication(
  app: ApplicationRow & { verifyKey: string },
  bot: UserRow,
  owner: UserRow | undefined,
  authorizedUsers: number,
) {
  return {
    ...publicApplication(app),
    bot: publicUser(bot),
    owner: publicUser(owner ?? bot),
    team: null,
    verify_key: app.verifyKey,
    flags_new: String(app.flags),
    redirect_uris: app.redirectUris,
    interactions_endpoint_url: null,
    role_connections_verification_url: null,
    approximate_user_authorization_count: authorizedUsers,
    event_webhooks_url: app.eventWebhooksUrl,
    event_webhooks_status: app.eventWebhooksStatus,
    event_webhooks_types: app.eventWebhooksStatus === 2 ? ['LOBBY_MESSAGE_CREATE', 'LOBBY_MESSAGE_UPDATE'] : [],
  }
}
