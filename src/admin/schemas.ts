// TypeBox schemas of the console's API (/admin/...): bodies, queries and the answers documented in /api/docs.
import { t } from 'elysia'
import { Int } from '../http/docs'
import { queryString } from '../http/form'

export const MAX_REASON = 512
export const MAX_SEARCH = 100

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])
const Iso = t.String({ description: 'ISO 8601 time' })

export const ReasonSchema = t.Object(
  { reason: t.Optional(t.String({ maxLength: MAX_REASON, description: 'why (kept in the audit log)' })) },
  { examples: [{ reason: 'reported for account sharing (ticket 1234)' }] },
)

export const LogoutSchema = t.Object(
  {
    session_id_hashes: t.Optional(
      t.Array(t.String({ maxLength: 64 }), { maxItems: 100, description: 'the sessions to end; absent: all' }),
    ),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  { examples: [{ session_id_hashes: ['r1pXk0S3b2w2vJ0y9hQj0w=='], reason: 'lost phone' }] },
)

export const SearchQuery = t.Object({
  query: t.String({ description: 'an id, or the start of a username, an e-mail or a phone number', maxLength: 256 }),
  limit: queryString(`integer 1-${MAX_SEARCH}, default 25`),
})

export const AuditQuery = t.Object({
  action: queryString('only this action, e.g. user.lock'),
  target_id: queryString('only rows about this id'),
  actor_id: queryString('only rows by this operator'),
  before: queryString('rows older than this audit row id'),
  limit: queryString('integer 1-200, default 50'),
})

export const OperatorAnswer = t.Object({
  id: t.String(),
  username: t.String(),
  mfa_enabled: t.Boolean({ description: 'false: the console asks for a second factor to be enabled first' }),
})

const UserSummary = t.Object({
  id: t.String(),
  username: t.String(),
  global_name: Nullable(t.String()),
  email: Nullable(t.String()),
  email_verified: t.Boolean(),
  phone: Nullable(t.String()),
  bot: t.Boolean(),
  state: t.String(),
  locked: t.Boolean(),
  created_at: Iso,
})

export const UserSearchAnswer = t.Array(UserSummary)

export const UserPageAnswer = t.Object({
  user: UserSummary,
  operator: t.Boolean(),
  mfa: t.Object({ enabled: t.Boolean(), factors: t.Array(t.String(), { description: 'enrolled factor types' }) }),
  sessions: t.Array(
    t.Object({
      id_hash: t.String(),
      created_at: Iso,
      approx_last_used_time: Iso,
      client_info: t.Object({
        os: Nullable(t.String()),
        platform: Nullable(t.String()),
        location: Nullable(t.String()),
      }),
    }),
  ),
  lobbies: t.Array(t.Object({ id: t.String(), application_id: t.String() })),
  guilds: t.Array(t.Object({ id: t.String(), name: t.String() })),
  oauth2_grants: t.Array(
    t.Object({ application_id: t.String(), application_name: Nullable(t.String()), scopes: t.Array(t.String()) }),
  ),
})

export const LockAnswer = t.Object({ id: t.String(), locked: t.Boolean(), sessions_ended: t.Optional(Int()) })
export const LogoutAnswer = t.Object({ sessions_ended: Int() })
export const MfaRemovedAnswer = t.Object({ id: t.String(), mfa_enabled: t.Boolean() })
export const ResentAnswer = t.Object({ id: t.String(), sent: t.Boolean() })
export const DeletedAnswer = t.Object({ id: t.String(), state: t.String() })

export const AuditAnswer = t.Array(
  t.Object({
    id: t.String(),
    created_at: Iso,
    actor: t.Object({ id: Nullable(t.String()), name: t.String() }),
    action: t.String(),
    target_type: Nullable(t.String()),
    target_id: Nullable(t.String()),
    reason: Nullable(t.String()),
    address: Nullable(t.String()),
    details: t.Record(t.String(), t.Union([t.String(), t.Number(), t.Boolean(), t.Null(), t.Array(t.String())]), {
      description: 'what the action did, e.g. sessions_ended',
    }),
  }),
)

export const CreateApplicationSchema = t.Object(
  {
    name: t.String({ minLength: 1, maxLength: 100 }),
    redirect_uris: t.Optional(
      t.Array(t.String({ format: 'uri', maxLength: 2048 }), { maxItems: 10, description: 'OAuth2 redirect URIs' }),
    ),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  { examples: [{ name: 'Space Game', redirect_uris: ['https://game.example/callback'] }] },
)

export const ApplicationsAnswer = t.Array(
  t.Object({
    id: t.String(),
    name: t.String(),
    bot_user_id: t.String(),
    redirect_uris: t.Array(t.String()),
    event_webhooks_url: Nullable(t.String()),
    event_webhooks_status: Int({ description: '1 disabled, 2 enabled, 3 disabled by the server after failures' }),
    created_at: Iso,
  }),
)

export const CreatedApplicationAnswer = t.Object({
  id: t.String(),
  name: t.String(),
  bot_token: t.String({ description: 'shown once' }),
  client_secret: t.String({ description: 'shown once' }),
})
