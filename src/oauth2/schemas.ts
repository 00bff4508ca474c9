// TypeBox schemas of OAuth2: the consent body, the authorize query and token form (documented; checked by hand in
// authorize.ts and grants.ts, which answer RFC 6749's errors), and the answers documented in /api/docs.
import { t } from 'elysia'
import { Int } from '../http/docs'
import { PublicUser } from '../accounts/schemas'

export const ConsentSchema = t.Object(
  {
    authorize: t.Boolean({
      description: 'true approves (the location carries a code), false denies (error=access_denied)',
    }),
    permissions: t.Optional(
      t.Any({
        description:
          "bot scope: the bot's permissions as a decimal string, the asked ones or fewer (default: the asked ones)",
      }),
    ),
    guild_id: t.Optional(t.Any({ description: 'bot scope (required): the guild to add the bot to' })),
  },
  { examples: [{ authorize: true }] },
)

export const AuthorizeQuery = t.Object({
  client_id: t.String(),
  response_type: t.Optional(
    t.Literal('code', { description: 'required, but for the bot scope alone (with applications.commands)' }),
  ),
  scope: t.String({ description: "space-separated scopes; `bot` adds the application's bot to a guild" }),
  redirect_uri: t.Optional(
    t.String({
      description:
        'required when the application registered more than one (bot scope with others: the first by default; bot alone: none)',
    }),
  ),
  permissions: t.Optional(t.String({ description: "bot scope: the bot's permissions, a decimal bit set" })),
  guild_id: t.Optional(t.String({ description: 'bot scope: the guild the consent page preselects' })),
  disable_guild_select: t.Optional(t.String({ description: 'bot scope: `true` keeps the guild of guild_id' })),
  state: t.Optional(t.String()),
  code_challenge: t.Optional(t.String({ description: 'PKCE, S256 only' })),
  code_challenge_method: t.Optional(t.Literal('S256')),
})

export const TokenForm = t.Object(
  {
    grant_type: t.Union([t.Literal('authorization_code'), t.Literal('refresh_token'), t.Literal('client_credentials')]),
    code: t.Optional(t.String({ description: 'authorization_code: the code from the redirect' })),
    redirect_uri: t.Optional(
      t.String({ description: 'authorization_code: the redirect_uri of the authorization request' }),
    ),
    code_verifier: t.Optional(t.String({ description: 'authorization_code with PKCE' })),
    refresh_token: t.Optional(t.String({ description: 'refresh_token: the refresh token' })),
    scope: t.Optional(
      t.String({ description: 'space-separated scopes (client_credentials; narrower ones on refresh)' }),
    ),
    client_id: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
    client_secret: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
  },
  // The client authenticates with HTTP Basic (Authorize: OAuth2Client), or client_id and client_secret in the form.
  { examples: [{ grant_type: 'client_credentials', scope: 'identify' }] },
)

export const RevokeForm = t.Object(
  {
    token: t.String({ description: 'an access or refresh token; either ends the whole grant' }),
    client_id: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
    client_secret: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
  },
  { examples: [{ token: 'access-or-refresh-token' }] },
)

/** RFC 6749's error body, as the token endpoints answer it. */
export const OAuthErrorBody = t.Object(
  { error: t.String(), error_description: t.String() },
  { description: 'RFC 6749 error' },
)

// ---- answers (documentation)

const PublicApplication = t.Object(
  {
    id: t.String(),
    name: t.String(),
    icon: t.Null(),
    description: t.String(),
    summary: t.String(),
    type: t.Null(),
    hook: t.Boolean(),
    bot_public: t.Boolean(),
    bot_require_code_grant: t.Boolean(),
    flags: Int(),
  },
  { description: 'Application' },
)

export const AuthorizeInfoAnswer = t.Object(
  {
    application: PublicApplication,
    user: PublicUser,
    authorized: t.Boolean(),
    scopes: t.Array(t.String()),
    redirect_uri: t.Optional(t.String({ description: 'absent for the bot scope alone without one' })),
    bot: t.Optional(PublicUser),
    guilds: t.Optional(
      t.Array(
        t.Object({
          id: t.String(),
          name: t.String(),
          icon: t.Null(),
          owner: t.Boolean(),
          permissions: t.String({ description: "the user's permissions there" }),
        }),
        { description: 'bot scope: the guilds where the user may add the bot (MANAGE_GUILD)' },
      ),
    ),
  },
  { description: 'What the request asks for' },
)

export const LocationAnswer = t.Object(
  {
    location: t.String({
      description:
        'the redirect with code (or error) and state; bot scope: guild_id and permissions too, or, with no redirect URI, the authorized page',
    }),
  },
  { description: 'Where to go' },
)

export const TokenAnswer = t.Object(
  {
    access_token: t.String(),
    token_type: t.Literal('Bearer'),
    expires_in: Int(),
    refresh_token: t.Optional(t.String()),
    scope: t.String(),
    guild: t.Optional(
      t.Object({}, { additionalProperties: true, description: 'bot scope: the guild the bot was added to' }),
    ),
  },
  { description: 'Tokens' },
)

export const FirstPartyTokenAnswer = t.Object(
  {
    access_token: t.String(),
    token_type: t.Literal('Bearer'),
    expires_in: Int(),
    scope: t.String(),
    application: t.Object({ id: t.String(), name: t.String() }),
  },
  { description: "The web client's Bearer token, bound to this session (it ends with the session's logout)" },
)

export const RevokedAnswer = t.Object(
  {},
  { additionalProperties: false, description: 'Revoked (also for unknown tokens)' },
)

export const AuthorizedApps = t.Array(
  t.Object({
    id: t.String(),
    scopes: t.Array(t.String()),
    application: PublicApplication,
    first_party: t.Optional(t.Boolean({ description: "The server's own web client (its tokens end with a logout)" })),
  }),
  { description: 'Authorized applications' },
)

export const MeAnswer = t.Object(
  {
    application: PublicApplication,
    scopes: t.Array(t.String()),
    expires: t.String({ format: 'date-time' }),
    user: t.Optional(PublicUser),
  },
  { description: 'The current authorization' },
)

export const CurrentApplicationAnswer = t.Object(
  {
    ...PublicApplication.properties,
    bot: PublicUser,
    owner: t.Object(PublicUser.properties, {
      description: 'the owning account; the bot user for an application the operator made (no owning account)',
    }),
    team: t.Null(),
    verify_key: t.String({ description: "the application's Ed25519 public key, hex: verifies its event webhooks" }),
    flags_new: t.String(),
    redirect_uris: t.Array(t.String()),
    interactions_endpoint_url: t.Null(),
    role_connections_verification_url: t.Null(),
    approximate_user_authorization_count: Int({ description: 'users with a live OAuth2 grant' }),
    event_webhooks_url: t.Nullable(
      t.String({ description: 'where its event webhooks go (set by the operator: app set)' }),
    ),
    event_webhooks_status: Int({
      description: '1 disabled, 2 enabled, 3 disabled by the server (its URL failed every call for an hour)',
    }),
    event_webhooks_types: t.Array(t.String(), { description: 'the events its webhooks receive' }),
  },
  { description: 'The application of the calling bot' },
)
