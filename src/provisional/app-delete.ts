// An operator deletes an application (`app delete`): everything of it goes in one transaction, as when a developer
// deletes an application on Discord — its lobbies with their members, messages and undelivered event webhooks (each
// with LOBBY_DELETE), its provisional accounts (deleted as `user delete` does: nobody else can ever sign in to them),
// its bot (out of every guild, its managed roles with it; the user marked deleted), its tokens, codes, commands,
// external identities and identity providers, its game relationships and invites. Full accounts merged from its players keep what they own; they only
// lose its grants. Nothing of another application is touched. Refusing while lobbies live would leave an operator who
// must stop an abusive game no way to do it; `app lock` is the reversible step.
import { isProvisional } from '../accounts/provisional'
import { cachedUser } from '../accounts/store'
import { deleteUser } from '../auth/lock'
import { transaction } from '../db/client'
import { removeFromEveryGuild } from '../guilds/public'
import { deleteLobby } from '../lobbies/lifecycle'
import { applicationLobbyIds } from '../lobbies/store'
import { deleteApplication } from '../oauth2/revocation'
import { findApplication } from '../oauth2/store'
import { deleteGameDataOfApplication } from '../relationships/game-store'
import { identityAccountsOf } from './store'

export type DeletedApplication = {
  id: string
  deleted: true
  lobbies: number
  provisional_accounts: number
  guilds_left: number
}

/** Delete an application and all it owns; undefined when there is none. Joins the caller's transaction. */
export async function deleteApplicationAndData(applicationId: string): Promise<DeletedApplication | undefined> {
  return await transaction(async () => {
    const app = await findApplication(applicationId)
    if (!app) return undefined
    const lobbies = await applicationLobbyIds(applicationId)
    for (const id of lobbies) await deleteLobby(id)
    let provisional = 0
    for (const userId of await identityAccountsOf(applicationId)) {
      const user = await cachedUser(userId)
      if (!user || !isProvisional(user) || user.state === 'deleted') continue
      await deleteUser(userId)
      provisional += 1
    }
    const guildsLeft = await removeFromEveryGuild(app.botUserId)
    await deleteUser(app.botUserId)
    await deleteGameDataOfApplication(applicationId)
    await deleteApplication(applicationId)
    return {
      id: applicationId,
      deleted: true as const,
      lobbies: lobbies.length,
      provisional_accounts: provisional,
      guilds_left: guildsLeft,
    }
  })
}
