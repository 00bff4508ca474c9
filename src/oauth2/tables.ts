import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { users } from '../accounts/tables'

export const applications = sqliteTable('applications', {
  id: text().primaryKey(),
  name: text().notNull(),
  ownerId: text().references(() => users.id, { onDelete: 'set null' }),
  botUserId: text()
    .notNull()
    .references(() => users.id),
  /** sha256 hex of the bot token */
  botTokenHash: text().notNull().unique(),
  /** sha256 hex of the client secret */
  clientSecretHash: text().notNull(),
  redirectUris: text({ mode: 'json' }).$type<string[]>().notNull().default([]),
  flags: integer().notNull().default(0),
  createdAt: integer().notNull(),
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
  eventWebhooksStatus: integer().notNull().default(1),
  /** Locked by an operator (`app lock`): its Bot token, its OAuth2 tokens and its token endpoints stop working. */
  lockedAt: integer(),
})

/**
 * OAuth2 access grants: one row per issued access token. A refresh rotates within a family: the old row's
 * refresh token is marked used (kept to detect reuse), a new row is inserted.
 */
export const oauth2Tokens = sqliteTable(
  'oauth2_tokens',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    accessTokenHash: text().notNull().unique(),
    refreshTokenHash: text().unique(),
    familyId: text().notNull(),
    /** Access token expiry (ms). Set to the rotation time when the row's refresh token is used. */
    expiresAt: integer().notNull(),
    refreshExpiresAt: integer(),
    /** When this row's refresh token was exchanged; a second use revokes the family. */
    refreshUsedAt: integer(),
    /** Issued to a public client (PKCE, no secret): its refresh needs only client_id. */
    publicClient: integer({ mode: 'boolean' }).notNull().default(false),
    createdAt: integer().notNull(),
  },
  (t) => [
    index('oauth2_tokens_family_idx').on(t.familyId),
    index('oauth2_tokens_user_app_idx').on(t.userId, t.applicationId),
  ],
)

/** Authorization codes: 10 minutes, single use. Only the hash of the code is kept. */
export const oauth2Codes = sqliteTable(
  'oauth2_codes',
  {
    codeHash: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    scopes: text().notNull(),
    redirectUri: text().notNull(),
    /** The authorize request named redirect_uri, so the token request must repeat it (RFC 6749 4.1.3). */
    redirectUriGiven: integer({ mode: 'boolean' }).notNull(),
    codeChallenge: text(),
    /** The token family the code's exchange creates; a replayed code revokes it. */
    familyId: text().notNull(),
    usedAt: integer(),
    expiresAt: integer().notNull(),
    createdAt: integer().notNull(),
    /** The guild the application's bot was added to with this consent (bot scope): the token answer names it. */
    guildId: text(),
  },
  (t) => [index('oauth2_codes_expires_idx').on(t.expiresAt)],
)

export type ApplicationRow = typeof applications.$inferSelect
export type OAuth2TokenRow = typeof oauth2Tokens.$inferSelect
export type OAuth2CodeRow = typeof oauth2Codes.$inferSelect
