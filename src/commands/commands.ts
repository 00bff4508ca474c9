// Application commands, stored per application, globally or per guild (where the application's bot is a member):
// created or replaced by name (POST), all of a scope replaced at once (PUT: what discord.py's tree.sync() sends),
// edited, deleted. Discord's rules a schema cannot say: CHAT_INPUT names lowercase letters, digits, - and _;
// CHAT_INPUT descriptions 1-100; required options before the others; names unique per type; 100 CHAT_INPUT, 15 USER
// and 15 MESSAGE commands per scope (30032). A command's version changes with each change.
import type { BotCaller } from '../core/caller'
import { Errors, formError } from '../core/errors'
import { snowflake } from '../core/snowflake'
import { transaction, type DB } from '../db/client'
import { isGuildMember } from '../guilds/public'
import { maxCommands, unknownCommand } from './errors'
import type { CommandInput, CommandPatchInput } from './schemas'
import { deleteCommandRows, insertCommand, scopeCommand, scopeCommands, updateCommand, type Scope } from './store'
import type { CommandOption, CommandRow } from './tables'

const CHAT_INPUT = 1
const LIMITS: Record<number, number> = { 1: 100, 2: 15, 3: 15 }
const NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u
const DUPLICATE = 'APPLICATION_COMMANDS_DUPLICATE_NAME'
const SUBCOMMAND = 1
const GROUP = 2

/** The caller's own application, and for guild commands a guild its bot is in (50001 otherwise). */
export async function scopeOf(caller: BotCaller, applicationId: string, guildId?: string): Promise<Scope> {
  if (caller.applicationId !== applicationId) throw Errors.missingAccess()
  if (guildId !== undefined && !(await isGuildMember(guildId, caller.userId))) throw Errors.missingAccess()
  return { applicationId, guildId: guildId ?? null }
}

type Fields = Omit<CommandRow, 'id' | 'version'>

/** A request's field errors by dotted path, reported together (formError). */
type Problems = Record<string, [code: string, message: string]>
const path = (at: (string | number)[], field: string) => [...at, field].join('.')
const report = (problems: Problems) => {
  if (Object.keys(problems).length) throw formError(problems)
}

function checkName(problems: Problems, at: (string | number)[], name: string): void {
  if (!NAME.test(name) || name !== name.toLowerCase())
    problems[path(at, 'name')] = ['APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid']
}

function checkOptions(problems: Problems, at: (string | number)[], options: CommandOption[]): void {
  let optionalSeen = false
  options.forEach((o, i) => {
    checkName(problems, [...at, 'options', i], o.name)
    if (o.options) checkOptions(problems, [...at, 'options', i], o.options)
    if (o.type === SUBCOMMAND || o.type === GROUP) return
    if (!o.required) optionalSeen = true
    else if (optionalSeen)
      problems[path(at, 'options')] = [
        'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID',
        'Required options must be placed before non-required options',
      ]
  })
}

/** A command's stored fields from a body, its rules reported into `problems` at `at`. */
function fields(problems: Problems, at: (string | number)[], input: CommandInput, scope: Scope): Fields {
  const type = input.type ?? CHAT_INPUT
  const chat = type === CHAT_INPUT
  // The schema checked each option's fields (its recursion is spelled out, so its type is not).
  const options = (input.options ?? []) as CommandOption[]
  if (chat) {
    checkName(problems, at, input.name)
    if (!input.description)
      problems[path(at, 'description')] = ['BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.']
    checkOptions(problems, at, options)
  }
  const permissions = input.default_member_permissions
  return {
    applicationId: scope.applicationId,
    guildId: scope.guildId,
    type,
    name: input.name,
    // USER and MESSAGE commands have neither a description nor options.
    description: chat ? (input.description ?? '') : '',
    options: chat ? options : [],
    defaultMemberPermissions: permissions === undefined || permissions === null ? null : String(permissions),
    dmPermission: input.dm_permission ?? true,
    nsfw: input.nsfw ?? false,
    nameLocalizations: input.name_localizations ?? null,
    descriptionLocalizations: input.description_localizations ?? null,
  }
}

const key = (c: { type: number; name: string }) => `${c.type} ${c.name}`

/** Whether the scope would hold more commands of a type than Discord allows. */
function overLimit(all: { type: number }[]): boolean {
  const counts = new Map<number, number>()
  for (const c of all) counts.set(c.type, (counts.get(c.type) ?? 0) + 1)
  return [...counts].some(([type, n]) => n > LIMITS[type])
}

/** Whether the stored command already is what the body says (then its version stays). */
function same(row: CommandRow, f: Fields): boolean {
  const { id: _, version: __, ...stored } = row
  return JSON.stringify(stored) === JSON.stringify({ ...stored, ...f })
}

async function save(tx: DB, old: CommandRow | undefined, f: Fields): Promise<CommandRow> {
  if (!old) return await insertCommand(tx, { ...f, id: snowflake(), version: snowflake() })
  return same(old, f) ? old : await updateCommand(tx, old.id, { ...f, version: snowflake() })
}

export function serializeCommand(c: CommandRow) {
  return {
    id: c.id,
    type: c.type,
    application_id: c.applicationId,
    ...(c.guildId ? { guild_id: c.guildId } : {}),
    name: c.name,
    name_localizations: c.nameLocalizations,
    description: c.description,
    description_localizations: c.descriptionLocalizations,
    ...(c.options.length ? { options: c.options } : {}),
    default_member_permissions: c.defaultMemberPermissions,
    ...(c.guildId ? {} : { dm_permission: c.dmPermission }),
    default_permission: true,
    nsfw: c.nsfw,
    version: c.version,
  }
}

export const listCommands = async (scope: Scope) => (await scopeCommands(scope)).map(serializeCommand)

export async function getCommand(scope: Scope, id: string) {
  const row = await scopeCommand(scope, id)
  if (!row) throw unknownCommand()
  return serializeCommand(row)
}

/** Create a command, or replace the one of the same type and name; `created` says which. */
export async function upsertCommand(scope: Scope, input: CommandInput) {
  const problems: Problems = {}
  const f = fields(problems, [], input, scope)
  report(problems)
  return await transaction(async (tx) => {
    const all = await scopeCommands(scope, tx)
    const old = all.find((c) => key(c) === key(f))
    if (!old && overLimit([...all, f])) throw maxCommands()
    return { created: !old, command: serializeCommand(await save(tx, old, f)) }
  })
}

/** Replace every command of the scope: those of the same type and name keep their ids, the others go. */
export async function overwriteCommands(scope: Scope, inputs: CommandInput[]) {
  const problems: Problems = {}
  const seen = new Set<string>()
  const wanted = inputs.map((input, i) => {
    const f = fields(problems, [i], input, scope)
    if (seen.has(key(f))) problems[String(i)] = [DUPLICATE, 'Application command names must be unique']
    seen.add(key(f))
    return f
  })
  report(problems)
  if (overLimit(wanted)) throw maxCommands()
  const saved = await transaction(async (tx) => {
    const existing = new Map((await scopeCommands(scope, tx)).map((c) => [key(c), c]))
    // One after another: the steps of a transaction never run side by side.
    const rows: CommandRow[] = []
    for (const f of wanted) rows.push(await save(tx, existing.get(key(f)), f))
    const kept = new Set(rows.map((r) => r.id))
    await deleteCommandRows(
      tx,
      [...existing.values()].filter((c) => !kept.has(c.id)).map((c) => c.id),
    )
    return rows
  })
  return saved.map(serializeCommand)
}

/** Change a command's fields (not its type); its name stays unique. */
export async function editCommand(scope: Scope, id: string, patch: CommandPatchInput) {
  return await transaction(async (tx) => {
    const old = await scopeCommand(scope, id, tx)
    if (!old) throw unknownCommand()
    const given = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
    const problems: Problems = {}
    const f = fields(problems, [], { ...inputOf(old), ...given, type: old.type }, scope)
    if ((await scopeCommands(scope, tx)).some((c) => c.id !== old.id && key(c) === key(f)))
      problems.name = [DUPLICATE, 'Application command names must be unique']
    report(problems)
    return serializeCommand(await save(tx, old, f))
  })
}

function inputOf(c: CommandRow): CommandInput {
  return {
    name: c.name,
    type: c.type,
    description: c.description,
    options: c.options,
    default_member_permissions: c.defaultMemberPermissions,
    dm_permission: c.dmPermission,
    nsfw: c.nsfw,
    name_localizations: c.nameLocalizations,
    description_localizations: c.descriptionLocalizations,
  }
}

export async function deleteCommand(scope: Scope, id: string): Promise<void> {
  const row = await scopeCommand(scope, id)
  if (!row || !(await transaction(async (tx) => await deleteCommandRows(tx, [row.id])))) throw unknownCommand()
}
