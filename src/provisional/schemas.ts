// TypeBox schemas of the provisional accounts' endpoints, with their limits (README "Players without an account").
import { t } from 'elysia'
import { Int } from '../http/docs'

/** The game's id for a player (any string the game chooses). */
export const MAX_EXTERNAL_USER_ID_CHARS = 128
/** Discord's global_name. */
export const MAX_DISPLAY_NAME_CHARS = 32
/** An external credential (an ID token, an access token): above this the request is refused before any work. */
export const MAX_EXTERNAL_TOKEN_CHARS = 8192

export const EXTERNAL_AUTH_TYPES = [
  'OIDC',
  'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
  'STEAM_SESSION_TICKET',
  'EPIC_ONLINE_SERVICES_ACCESS_TOKEN',
  'EPIC_ONLINE_SERVICES_ID_TOKEN',
  'UNITY_SERVICES_ID_TOKEN',
] as const

export const BotTokenSchema = t.Object(
  {
    external_user_id: t.String({
      minLength: 1,
      maxLength: MAX_EXTERNAL_USER_ID_CHARS,
      description: "The game's unique id for the player; one provisional account per application and id",
      examples: ['player-8842'],
    }),
    preferred_global_name: t.Optional(
      t.String({
        minLength: 1,
        maxLength: MAX_DISPLAY_NAME_CHARS,
        description: "The new account's display name (global_name); ignored once the account exists",
        examples: ['Grace'],
      }),
    ),
  },
  { examples: [{ external_user_id: 'player-8842', preferred_global_name: 'Grace' }] },
)

export const ExchangeSchema = t.Object(
  {
    client_id: t.String({ pattern: '^[0-9]{1,20}$', description: "The application's id" }),
    client_secret: t.Optional(
      t.String({ maxLength: 256, description: 'Confidential clients (a game backend); a public client sends none' }),
    ),
    external_auth_type: t.Union(
      EXTERNAL_AUTH_TYPES.map((type) => t.Literal(type)),
      { description: "OIDC and DISCORD_BOT_ISSUED_ACCESS_TOKEN are served; the vendors' types answer 530000" },
    ),
    external_auth_token: t.String({
      minLength: 1,
      maxLength: MAX_EXTERNAL_TOKEN_CHARS,
      description: 'The OIDC ID token, or an access token of POST /partner-sdk/token/bot',
    }),
  },
  {
    examples: [
      {
        client_id: '1234567890123456789',
        client_secret: 'the-application-client-secret',
        external_auth_type: 'OIDC',
        external_auth_token: 'eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJwbGF5ZXItODg0MiJ9.c2lnbmF0dXJl',
      },
    ],
  },
)

export const ProvisionalTokenAnswer = t.Object(
  {
    access_token: t.String(),
    id_token: t.String({
      description: 'EdDSA JWT: iss this server, sub the account, aud the application (its verify_key)',
    }),
    token_type: t.Literal('Bearer'),
    expires_in: Int({ examples: [3600] }),
    refresh_token: t.Optional(t.String({ description: 'OIDC with a client secret only' })),
    scope: t.Literal('sdk.social_layer'),
  },
  { description: "A provisional account's Bearer token" },
)
