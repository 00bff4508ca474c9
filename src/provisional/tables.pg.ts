// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { index, pgTable, uniqueIndex } from 'drizzle-orm/pg-core'
import { users } from '../accounts/tables.pg'
import { long, text } from '../db/pg/columns'
import { applications } from '../oauth2/tables.pg'

export const externalIdentities = pgTable(
  'external_identities',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    kind: text().$type<'bot' | 'oidc'>().notNull(),
    issuer: text().notNull(),
    subject: text().notNull(),
    userId: text()
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: long().notNull(),
  },
  (t) => [
    uniqueIndex('external_identities_key').on(t.applicationId, t.kind, t.issuer, t.subject),
    index('external_identities_user_idx').on(t.userId),
  ],
)

export const externalAuthProviders = pgTable(
  'external_auth_providers',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    type: text().$type<'oidc'>().notNull(),
    issuer: text().notNull(),
    audience: text().notNull(),
    createdAt: long().notNull(),
  },
  (t) => [uniqueIndex('external_auth_providers_app_issuer').on(t.applicationId, t.issuer)],
)
