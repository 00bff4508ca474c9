import { bool, index, int, json, snowflake, table, text } from '../db/table'
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
export const commands = table(
  'application_commands',
  {
    id: snowflake().primaryKey(),
    applicationId: snowflake()
      .notNull()
      .references(() => applications.id, { onDelete: 'cascade' }),
    guildId: snowflake().references(() => guilds.id, { onDelete: 'cascade' }),
    /** 1 chat input (slash), 2 user, 3 message */
    type: int().notNull(),
    name: text().notNull(),
    description: text().notNull(),
    options: json<CommandOption[]>().notNull().default([]),
    /** Permission bits as a decimal string; null: everyone. */
    defaultMemberPermissions: text(),
    dmPermission: bool().notNull().default(true),
    nsfw: bool().notNull().default(false),
    nameLocalizations: json<Record<string, string>>(),
    descriptionLocalizations: json<Record<string, string>>(),
    /** A snowflake, new at every change. */
    version: text().notNull(),
  },
  (t) => [index('application_commands_scope_idx').on(t.applicationId, t.guildId)],
)

export type CommandRow = typeof commands.$inferSelect
