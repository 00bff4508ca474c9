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

// ---- applications: rotation, event webhooks, deliveries

export const RotateSchema = t.Object(
  {
    confirm: t.String({ maxLength: 100, description: 'the application’s name, typed by the operator' }),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  { examples: [{ confirm: 'Space Game', reason: 'token leaked in a public repository' }] },
)

export const BotTokenAnswer = t.Object({ id: t.String(), bot_token: t.String({ description: 'shown once' }) })
export const ClientSecretAnswer = t.Object({ id: t.String(), client_secret: t.String({ description: 'shown once' }) })

export const WebhookUrlSchema = t.Object(
  {
    url: Nullable(
      t.String({ maxLength: 2048, description: 'PINGed (signed) first: taken only when it answers 2xx; null: off' }),
    ),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  { examples: [{ url: 'https://game.example/discord-events' }] },
)

export const ApplicationAnswer = ApplicationsAnswer.items

export const PingAnswer = t.Object({
  ok: t.Boolean({ description: 'the URL answered 2xx in time' }),
  url: Nullable(t.String()),
  latency_ms: Int(),
  error: Nullable(t.String({ description: 'what it answered instead (a status, a network error)' })),
})

export const DeliveriesAnswer = t.Array(
  t.Object({
    id: t.String(),
    lobby_id: t.String(),
    event_type: Nullable(t.String()),
    status: t.String({ description: 'queued (not tried yet) or retrying' }),
    attempts: Int(),
    last_error: Nullable(t.String()),
    created_at: Iso,
    next_attempt_at: Iso,
    failing_since: Nullable(Iso),
  }),
  { description: 'the events still to deliver, oldest first (a delivered event leaves the queue)' },
)

// ---- experiments

const Definitions = t.Array(t.Unknown(), {
  maxItems: 1000,
  description: 'the definitions file (the same JSON as `experiments load`), checked whole',
})

const FilterValue = t.Union([t.String(), t.Number(), t.Boolean(), t.Null(), t.Array(t.Union([t.String(), t.Number()]))])

/** One definition as loaded (experiments/definitions.ts Definition). */
const DefinitionShape = t.Object({
  name: t.String(),
  kind: t.String({ description: 'user or guild' }),
  revision: Int(),
  hash_key: t.Optional(t.String()),
  aa_mode: t.Optional(t.Boolean()),
  trigger_debugging: t.Optional(t.Boolean()),
  platform: t.Optional(t.String()),
  holdout: t.Optional(t.Object({ name: t.String(), bucket: Int() })),
  populations: t.Array(
    t.Object({
      ranges: t.Array(t.Object({ bucket: Int(), rollout: t.Array(t.Object({ s: Int(), e: Int() })) })),
      filters: t.Optional(t.Record(t.String(), t.Record(t.String(), FilterValue))),
    }),
  ),
  overrides: t.Optional(t.Array(t.Object({ b: Int(), k: t.Array(t.String()) }))),
})

export const ExperimentsAnswer = t.Object({
  version: Int({ description: 'the loaded version (0 before any load): PUT it back to refuse a stale edit' }),
  definitions: t.Array(DefinitionShape),
})

export const SaveExperimentsSchema = t.Object(
  {
    definitions: Definitions,
    version: t.Optional(Int({ description: 'the version edited: refused when another load came since' })),
    reason: t.Optional(t.String({ maxLength: MAX_REASON })),
  },
  {
    examples: [
      {
        definitions: [
          {
            name: '2025-04_login_copy',
            kind: 'user',
            revision: 1,
            populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 4999 }] }] }],
          },
        ],
        version: 1,
      },
    ],
  },
)

export const SavedExperimentsAnswer = t.Object({
  loaded: Int(),
  version: Int(),
  warnings: t.Array(t.String()),
})

export const PreviewQuery = t.Object({
  user: queryString('a user id or a fingerprint (user experiments)'),
  guild: queryString('a guild id (guild experiments)'),
})

export const PreviewAnswer = t.Object({
  experiment: t.String(),
  kind: t.String(),
  resource_id: t.String(),
  bucket: Int({ description: 'as the client sees it (-1: none, or an A/A experiment)' }),
  population: Int({ description: 'the population that placed it (-1: none)' }),
  position: Int({ description: 'its rollout position, 0-9999' }),
  override: t.Boolean(),
  holdout: t.Optional(t.Object({ name: t.String(), revision: Int(), bucket: Int() })),
})

export const HistogramQuery = t.Object({ sample: queryString('how many random ids, 1-20000, default 2000') })

export const HistogramAnswer = t.Object({
  experiment: t.String(),
  kind: t.String(),
  sample: Int(),
  buckets: t.Array(t.Object({ bucket: Int(), count: Int() })),
})

// ---- live lobbies

export const LobbiesQuery = t.Object({
  before: queryString('lobbies older than this lobby id'),
  limit: queryString('integer 1-100, default 50'),
})

export const LobbiesAnswer = t.Object({
  total: Int(),
  lobbies: t.Array(
    t.Object({
      id: t.String(),
      created_at: Iso,
      member_count: Int(),
      in_call: Int({ description: 'members in its call' }),
      active: t.Boolean({ description: 'a member is online or in the call (it does not close for idleness)' }),
    }),
  ),
})

const Person = {
  id: t.String(),
  username: t.String(),
  global_name: Nullable(t.String()),
}
const Meta = Nullable(t.Record(t.String(), t.String()))

export const LobbyPageAnswer = t.Object({
  lobby: t.Object({
    id: t.String(),
    application_id: t.String(),
    metadata: Meta,
    flags: Int(),
    created_at: Iso,
    idle_deadline: Nullable(Iso),
    linked_channel_id: Nullable(t.String()),
  }),
  members: t.Array(t.Object({ ...Person, metadata: Meta, flags: Int(), online: t.Boolean(), in_call: t.Boolean() })),
  messages: t.Array(
    t.Object({
      id: t.String(),
      author: t.Object(Person),
      content: t.String(),
      metadata: Meta,
      moderation_metadata: Meta,
      created_at: Iso,
    }),
    { description: 'the last 50, newest first' },
  ),
})

export const MemberRemovedAnswer = t.Object({ lobby_id: t.String(), user_id: t.String(), removed: t.Boolean() })
export const LobbyClosedAnswer = t.Object({ id: t.String(), closed: t.Boolean() })

// ---- dashboard

export const DashboardAnswer = t.Object({
  users: Int(),
  gateway_connections: Int({ description: 'this node’s open Gateway sockets' }),
  gateway_sessions: Int({ description: 'this node’s Gateway sessions' }),
  lobbies: Int(),
  messages_last_minute: Int(),
  messages_per_minute: t.Array(Int(), { description: 'lobby messages of each of the last 60 minutes, oldest first' }),
  event_deliveries_queued: Int(),
  node: t.Object({
    name: Nullable(t.String({ description: 'in cluster mode, the node that answered' })),
    clustered: t.Boolean(),
    database: t.String(),
    version: t.String(),
    uptime_seconds: Int(),
  }),
})
