// The consent of the bot scope (Discord's bot authorization): the guilds offered on the consent page, and the answer to
// it: the bot added to the guild chosen with the permissions granted (through the install port: guilds/ does it),
// then a code when other scopes came with it, else the registered URI named or our own "authorized" page.
import { publicUser } from '../accounts/serialize'
import { cachedUser } from '../accounts/store'
import { config } from '../config'
import { formError } from '../core/errors'
import { isSnowflake } from '../core/snowflake'
import { transaction } from '../db/client'
import { type AuthorizeRequest, denied, grantCode, installedLocation, permissionBits } from './authorize'
import { installPort } from './install-port'

/** GET /oauth2/authorize's extra fields for the bot scope: the bot, and the guilds the user may add it to. */
export async function installChoices(request: AuthorizeRequest, userId: string) {
  if (!request.bot) return {}
  const bot = await cachedUser(request.app.botUserId)
  return { ...(bot ? { bot: publicUser(bot) } : {}), guilds: await installPort().guildsFor(userId) }
}

export type Consent = { authorize: boolean; permissions?: unknown; guild_id?: unknown }

/** POST /oauth2/authorize: where the browser goes now (the bot added first when the bot scope was asked). */
export async function answerConsent(request: AuthorizeRequest, userId: string, body: Consent): Promise<string> {
  const webUrl = config().webUrl
  if (!body.authorize) return denied(request, webUrl)
  if (!request.bot) return await grantCode(request as AuthorizeRequest & { redirectUri: string }, userId)
  const asked = request.bot
  const guildId = body.guild_id
  if (guildId === undefined || guildId === null || guildId === '')
    throw formError({ guild_id: ['BASE_TYPE_REQUIRED', 'This field is required'] })
  if (typeof guildId !== 'string' || !isSnowflake(guildId))
    throw formError({ guild_id: ['NUMBER_TYPE_COERCE', `Value "${String(guildId)}" is not snowflake.`] })
  if (asked.disableGuildSelect && asked.guildId !== undefined && guildId !== asked.guildId)
    throw formError({ guild_id: ['BASE_TYPE_INVALID', 'The guild cannot be changed for this authorization.'] })
  // The person may leave some of the asked permissions unticked, never add one.
  const permissions = body.permissions === undefined ? asked.permissions : permissionBits(body.permissions)
  if (permissions === undefined || (permissions & ~asked.permissions) !== 0n)
    throw formError({ permissions: ['BASE_TYPE_INVALID', 'Invalid permissions value.'] })
  const installed = { guildId, permissions }
  // The bot joins and the code is issued together: no code for a bot that could not be added, nor the reverse.
  return await transaction(async () => {
    await installPort().addBot({
      guildId,
      userId,
      botUserId: request.app.botUserId,
      botName: request.app.name,
      permissions,
    })
    return request.code && request.redirectUri
      ? await grantCode(request as AuthorizeRequest & { redirectUri: string }, userId, installed)
      : installedLocation(request, installed, webUrl)
  })
}
