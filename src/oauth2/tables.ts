import { bool, index, int, json, long, snowflake, table, text, timestamp } from '../db/table'
import { authSessions, users } from '../accounts/tables'

export const applications = table('applications', {
  id: snowflake().primaryKey(),
  name: text().notNull(),
  ownerId: snowflake().references(() => users.id, { onDelete: 'set null' }),
  botUserId: snowflake()
    .notNull()
    .references(() => users.id),
  /** sha256 hex of the bot token */
  botTokenHash: text().notNull().unique(),
  /** sha256 hex of the client secret */
  clientSecretHash: text().notNull(),
  redirectUris: json<string[]>().notNull().default([]),
  flags: long().notNull().default(0),
  createdAt: timestamp().notNull(),
  /**
   * Ed25519 public key, hex: Discord's `verify_key`, what the application checks its event webhooks' signatures with.
   * Made with the application; one made before keys existed gets its pair when first asked (ensureApplicationKeys).
   */
  verifyKey: text(),
  /** The matching private key (PKCS#8 DER, base64): signs the application's event webhooks; never leaves the server. */
  signingKey: text(),
  /** Where the application's event webhooks go (Discord's event_webhooks_url); set only after it answered a PING. */
  eventWebhooksUrl: text(),
  /** Discord's event_webhooks_status: 1 disabled, 2 enabled, 3 disabled by the server (lobbies/event-webhooks.ts). */
  eventWebhooksStatus: int().notNull().default(1),
  /** Locked by an operator (`app lock`): its Bot token, its OAuth2 tokens and its token endpoints stop working. */
  lockedAt: timestamp(),
  /**
   * The server's own web client (first-party.ts): one such application, made on first use. Its tokens are issued
   * from a user session (consent implied) and end with it.
   */
  firstParty: bool().notNull().default(false),
})

/**
 * OAuth2 access grants: one row per issued access token. A refresh rotates within a family: the old row's
 * refresh token is marked used (kept to detect reuse), a new row is inserted.
 */
export const oauth2Tokens = table(
  'oauth2_tokens',
  {
    id: snowflake().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    accessTokenHash: text().notNull().unique(),
    refreshTokenHash: text().unique(),
    familyId: text().notNull(),
    /** Access token expiry (ms). Set to the rotation time when the row's refresh token is used. */
    expiresAt: timestamp().notNull(),
    refreshExpiresAt: timestamp(),
    /** When this row's refresh token was exchanged; a second use revokes the family. */
    refreshUsedAt: timestamp(),
    /** Issued to a public client (PKCE, no secret): its refresh needs only client_id. */
    publicClient: bool().notNull().default(false),
    createdAt: timestamp().notNull(),
    /** The first-party application's tokens: the user session it was issued to; logging that out deletes it. */
    sessionId: snowflake().references(() => authSessions.id, { onDelete: 'cascade' }),
  },
  (t) => [
    index('oauth2_tokens_family_idx').on(t.familyId),
    index('oauth2_tokens_user_app_idx').on(t.userId, t.applicationId),
    index('oauth2_tokens_session_idx').on(t.sessionId),
  ],
)

/** Authorization codes: 10 minutes, single use. Only the hash of the code is kept. */
export const oauth2Codes = table(
  'oauth2_codes',
  {
    codeHash: text().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    redirectUri: text().notNull(),
    /** The authorize request named redirect_uri, so the token request must repeat it (RFC 6749 4.1.3). */
    redirectUriGiven: bool().notNull(),
    codeChallenge: text(),
    /** The token family the code's exchange creates; a replayed code revokes it. */
    familyId: text().notNull(),
    usedAt: timestamp(),
    expiresAt: timestamp().notNull(),
    createdAt: timestamp().notNull(),
    /** The guild the application's bot was added to with this consent (bot scope): the token answer names it. */
    guildId: snowflake(),
  },
  (t) => [index('oauth2_codes_expires_idx').on(t.expiresAt)],
)

export type ApplicationRow = typeof applications.$inferSelect
export type OAuth2TokenRow = typeof oauth2Tokens.$inferSelect
export type OAuth2CodeRow = typeof oauth2Codes.$inferSelect
