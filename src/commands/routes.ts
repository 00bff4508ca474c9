// REST of application commands: an application's bot manages its global commands and those of the guilds it is in.
import { t } from 'elysia'
import type { BotCaller } from '../core/caller'
import { NO_CONTENT } from '../http/docs'
import { type Endpoint, endpoint } from '../http/endpoint'
import { json, noContent } from '../http/respond'
import {
  deleteCommand,
  editCommand,
  getCommand,
  listCommands,
  overwriteCommands,
  scopeOf,
  upsertCommand,
} from './commands'
import { Command, CommandPatchSchema, CommandSchema, CommandsSchema } from './schemas'

const tag = 'commands'
const list = t.Array(Command, { description: 'The commands, oldest first' })

/** The six routes of one scope: global (`/applications/{id}/commands`) or a guild's. */
function scopeEndpoints(base: string, guild: boolean): Endpoint[] {
  const where = guild ? "a guild's" : 'global'
  type Params = { applicationId: string; guildId?: string; commandId?: string }
  const scope = async (caller: BotCaller, params: Params) => await scopeOf(caller, params.applicationId, params.guildId)
  return [
    endpoint(
      { method: 'GET', path: base, auth: 'bot', tag, summary: `List the ${where} commands`, answers: { 200: list } },
      async ({ caller, params }) => await listCommands(await scope(caller, params as Params)),
    ),
    endpoint(
      {
        method: 'POST',
        path: base,
        auth: 'bot',
        tag,
        summary: `Create a ${where} command, or replace the one with its type and name`,
        body: CommandSchema,
        answers: { 200: Command, 201: Command },
      },
      async ({ caller, params, body }) => {
        const { created, command } = await upsertCommand(await scope(caller, params as Params), body)
        return json(command, created ? 201 : 200)
      },
    ),
    endpoint(
      {
        method: 'PUT',
        path: base,
        auth: 'bot',
        tag,
        summary: `Replace every ${where} command (what discord.py's tree.sync() sends)`,
        body: CommandsSchema,
        answers: { 200: list },
      },
      async ({ caller, params, body }) => await overwriteCommands(await scope(caller, params as Params), body),
    ),
    endpoint(
      {
        method: 'GET',
        path: `${base}/:commandId`,
        auth: 'bot',
        tag,
        summary: `Get a ${where} command`,
        answers: { 200: Command },
      },
      async ({ caller, params }) => {
        const p = params as Params
        return await getCommand(await scope(caller, p), p.commandId!)
      },
    ),
    endpoint(
      {
        method: 'PATCH',
        path: `${base}/:commandId`,
        auth: 'bot',
        tag,
        summary: `Edit a ${where} command`,
        body: CommandPatchSchema,
        answers: { 200: Command },
      },
      async ({ caller, params, body }) => {
        const p = params as Params
        return await editCommand(await scope(caller, p), p.commandId!, body)
      },
    ),
    endpoint(
      {
        method: 'DELETE',
        path: `${base}/:commandId`,
        auth: 'bot',
        tag,
        summary: `Delete a ${where} command`,
        answers: { 204: NO_CONTENT },
      },
      async ({ caller, params }) => {
        const p = params as Params
        return (await deleteCommand(await scope(caller, p), p.commandId!), noContent())
      },
    ),
  ]
}

/** The commands domain's endpoints (http/endpoint.ts). */
export const commandEndpoints = [
  ...scopeEndpoints('/applications/:applicationId/commands', false),
  ...scopeEndpoints('/applications/:applicationId/guilds/:guildId/commands', true),
]
