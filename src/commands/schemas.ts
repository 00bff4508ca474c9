// TypeBox schemas of application commands: the bodies of POST, PUT (a list) and PATCH, and the command object
// documented in /api/docs. What a schema cannot say (CHAT_INPUT names, required options first, how many of a
// type) commands.ts judges.
import type { TObject } from '@sinclair/typebox'
import { t } from 'elysia'
import { ALL_PERMISSIONS } from '../core/discord'
import { Int } from '../http/docs'
import { Refine } from '../http/validation'

const Snowflake = t.String({ pattern: '^\\d{1,20}$' })
const Localizations = t.Optional(t.Nullable(t.Record(t.String(), t.String({ maxLength: 100 }))))

/** An option; `depth` levels of nested options below it (a group's subcommands, a subcommand's options). */
function option(depth: number): TObject {
  return t.Object({
    type: t.Integer({ minimum: 1, maximum: 11, description: '1 subcommand, 2 group, 3 string ... 11 attachment' }),
    name: t.String({ minLength: 1, maxLength: 32 }),
    description: t.String({ minLength: 1, maxLength: 100 }),
    name_localizations: Localizations,
    description_localizations: Localizations,
    required: t.Optional(t.Boolean()),
    choices: t.Optional(
      t.Array(
        t.Object({
          name: t.String({ minLength: 1, maxLength: 100 }),
          value: t.Union([t.String({ maxLength: 100 }), t.Number()]),
          name_localizations: Localizations,
        }),
        { maxItems: 25 },
      ),
    ),
    channel_types: t.Optional(t.Array(t.Integer({ minimum: 0 }))),
    min_value: t.Optional(t.Number()),
    max_value: t.Optional(t.Number()),
    min_length: t.Optional(t.Integer({ minimum: 0, maximum: 6000 })),
    max_length: t.Optional(t.Integer({ minimum: 1, maximum: 6000 })),
    autocomplete: t.Optional(t.Boolean()),
    ...(depth > 0 ? { options: t.Optional(t.Array(option(depth - 1), { maxItems: 25 })) } : {}),
  })
}

const commandFields = {
  name: t.String({ minLength: 1, maxLength: 32 }),
  type: t.Optional(t.Integer({ minimum: 1, maximum: 3, description: '1 chat input (default), 2 user, 3 message' })),
  description: t.Optional(t.String({ maxLength: 100, description: '1-100 for chat input; empty for the others' })),
  name_localizations: Localizations,
  description_localizations: Localizations,
  options: t.Optional(t.Array(option(2), { maxItems: 25 })),
  default_member_permissions: t.Optional(
    Refine(
      'CommandPermissions',
      t.Nullable(t.Union([t.String({ pattern: '^\\d{1,20}$' }), t.Number({ minimum: 0, multipleOf: 1 })]), {
        description: 'permission bits (a decimal string or a number); null: everyone',
      }),
      (value) =>
        BigInt(value) & ~ALL_PERMISSIONS
          ? { code: 'BASE_TYPE_INVALID', message: 'Invalid permissions value.' }
          : undefined,
    ),
  ),
  dm_permission: t.Optional(t.Nullable(t.Boolean())),
  default_permission: t.Optional(t.Nullable(t.Boolean())),
  nsfw: t.Optional(t.Boolean()),
}
const example = {
  name: 'queue',
  description: 'Join the match queue',
  options: [
    {
      type: 3,
      name: 'mode',
      description: 'Which mode',
      required: true,
      choices: [{ name: 'Ranked', value: 'ranked' }],
    },
  ],
}

export const CommandSchema = t.Object(commandFields, { examples: [example] })
export type CommandInput = typeof CommandSchema.static
export const CommandsSchema = t.Array(CommandSchema, {
  examples: [[example, { name: 'Report', type: 2 }]],
  description: 'every command of the scope: those not named are deleted, those named keep their ids',
})
/** PATCH: any field but the type. */
export const CommandPatchSchema = t.Object(
  { ...t.Partial(t.Object(commandFields)).properties, type: t.Optional(t.Never({ description: 'cannot change' })) },
  { examples: [{ description: 'Join the queue for a match' }] },
)
export type CommandPatchInput = typeof CommandPatchSchema.static

// ---- answers (documentation)

const LocalizationsAnswer = t.Nullable(t.Record(t.String(), t.String()))

function optionAnswer(depth: number): TObject {
  return t.Object({
    type: Int(),
    name: t.String(),
    description: t.String(),
    name_localizations: t.Optional(LocalizationsAnswer),
    description_localizations: t.Optional(LocalizationsAnswer),
    required: t.Optional(t.Boolean()),
    choices: t.Optional(
      t.Array(
        t.Object({
          name: t.String(),
          value: t.Union([t.String(), t.Number()]),
          name_localizations: t.Optional(LocalizationsAnswer),
        }),
      ),
    ),
    channel_types: t.Optional(t.Array(Int())),
    min_value: t.Optional(t.Number()),
    max_value: t.Optional(t.Number()),
    min_length: t.Optional(Int()),
    max_length: t.Optional(Int()),
    autocomplete: t.Optional(t.Boolean()),
    ...(depth > 0 ? { options: t.Optional(t.Array(optionAnswer(depth - 1))) } : {}),
  })
}

export const Command = t.Object(
  {
    id: Snowflake,
    type: Int(),
    application_id: Snowflake,
    guild_id: t.Optional(Snowflake),
    name: t.String(),
    name_localizations: LocalizationsAnswer,
    description: t.String(),
    description_localizations: LocalizationsAnswer,
    options: t.Optional(t.Array(optionAnswer(2), { description: 'absent without options' })),
    default_member_permissions: t.Nullable(t.String({ description: 'bit set as a decimal string' })),
    dm_permission: t.Optional(t.Boolean({ description: 'global commands' })),
    default_permission: t.Boolean({ description: 'always true here (deprecated by Discord)' }),
    nsfw: t.Boolean(),
    version: Snowflake,
  },
  { description: 'Application command' },
)
