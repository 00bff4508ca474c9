// Provisional accounts (issue 44): who an external identity is here, and the identity providers an application trusts.
import { index, snowflake, table, text, textEnum, timestamp, uniqueIndex } from '../db/table'
import { applications } from '../oauth2/tables'
import { users } from '../accounts/tables'

/**
 * One row per external identity of an application's player: the game's own id given with its Bot token (`kind`
 * 'bot', `issuer` ''), or an OIDC identity (`kind` 'oidc', the ID token's `iss` and `sub`). It names the account it
 * is: the provisional account made for it (or, once merged, the full account). An (application, kind, issuer,
 * subject) is one row, so one account.
 */
export const externalIdentities = table(
  'external_identities',
  {
    id: snowflake().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    kind: textEnum(['bot', 'oidc']).notNull(),
    issuer: text().notNull(),
    subject: text().notNull(),
    userId: snowflake()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: timestamp().notNull(),
  },
  (t) => [
    uniqueIndex('external_identities_key').on(t.applicationId, t.kind, t.issuer, t.subject),
    index('external_identities_user_idx').on(t.userId),
  ],
)

/** An identity provider an application trusts for POST /partner-sdk/token (`app auth-provider add`). */
export const externalAuthProviders = table(
  'external_auth_providers',
  {
    id: snowflake().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    /** 'oidc' only: Steam, EOS and Unity need their vendors' services (README). */
    type: textEnum(['oidc']).notNull(),
    /** The issuer URL, as the ID tokens' `iss` says it (no trailing slash added or removed). */
    issuer: text().notNull(),
    /** The `aud` the ID tokens must carry: the application's client id at that provider. */
    audience: text().notNull(),
    createdAt: timestamp().notNull(),
  },
  (t) => [uniqueIndex('external_auth_providers_app_issuer').on(t.applicationId, t.issuer)],
)

export type ExternalIdentityRow = typeof externalIdentities.$inferSelect
export type ExternalAuthProviderRow = typeof externalAuthProviders.$inferSelect
