import { sqliteTable, text, integer, index } from 'drizzle-orm/sqlite-core'
import { guilds } from '../guilds/tables'
import { applications } from '../oauth2/tables'

/** A command option as stored and answered (Discord's, the fields a bot sends; nested for subcommands). */
export type CommandOption = {
  type: number
  name: string
  description: string
  required?: boolean
  choices?: { name: string; value: string | number; name_localizations?: Record<string, string> | null }[]
  options?: CommandOption[]
  channel_types?: number[]
  min_value?: number
  max_value?: number
  min_length?: number
  max_length?: number
  autocomplete?: boolean
  name_localizations?: Record<string, string> | null
  description_localizations?: Record<string, string> | null
}

/** An application's commands: global (guild_id null) or for one guild. Names are unique per scope and type. */
export const commands = sqliteTable(
  'application_commands',
  {
    id: text().primaryKey(),
    applicationId: text()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    guildId: text().references(() => guilds.id, { onDelete: 'cascade' }),
    /** 1 chat input (slash), 2 user, 3 message */
    type: integer().notNull(),
    name: text().notNull(),
    description: text().notNull(),
    options: text({ mode: 'json' }).$type<CommandOption[]>().notNull().default([]),
    /** Permission bits as a decimal string; null: everyone. */
    defaultMemberPermissions: text(),
    dmPermission: integer({ mode: 'boolean' }).notNull().default(true),
    nsfw: integer({ mode: 'boolean' }).notNull().default(false),
    nameLocalizations: text({ mode: 'json' }).$type<Record<string, string>>(),
    descriptionLocalizations: text({ mode: 'json' }).$type<Record<string, string>>(),
    /** A snowflake, new at every change. */
    version: text().notNull(),
  },
  (t) => [index('application_commands_scope_idx').on(t.applicationId, t.guildId)],
)

export type CommandRow = typeof commands.$inferSelect
