// PostgreSQL mirror of ./tables.ts (column kinds: src/db/pg/columns.ts). tables.ts stays the source: change both,
// then `bun run db:generate`; tests/db/pg-schema.test.ts fails while they differ.
import { boolean, index, integer, pgTable } from 'drizzle-orm/pg-core'
import { guilds } from '../guilds/tables.pg'
import { applications } from '../oauth2/tables.pg'
import { jsonDefault, jsonText, text } from '../db/pg/columns'
import type { CommandOption } from './tables'

export const commands = pgTable(
  'application_commands',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    guildId: text().references(() => guilds.id, { onDelete: 'cascade' }),
    type: integer().notNull(),
    name: text().notNull(),
    description: text().notNull(),
    options: jsonText<CommandOption[]>().notNull().default(jsonDefault([])),
    defaultMemberPermissions: text(),
    dmPermission: boolean().notNull().default(true),
    nsfw: boolean().notNull().default(false),
    nameLocalizations: jsonText<Record<string, string>>(),
    descriptionLocalizations: jsonText<Record<string, string>>(),
    version: text().notNull(),
  },
  (t) => [index('application_commands_scope_idx').on(t.applicationId, t.guildId)],
)
