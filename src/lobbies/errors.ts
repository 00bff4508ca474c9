// The errors of lobbies. Limits have no JSON code in Discord's documentation: they are form errors naming the
// field at fault.
import { ApiError, formError } from '../core/errors'
import { MAX_LOBBIES_PER_USER_PER_APP, MAX_MEMBERS_PER_LOBBY } from './limits'

export const lobbyFull = (field = 'members') =>
  formError({ [field]: ['LOBBY_MEMBER_LIMIT', `Lobbies can have at most ${MAX_MEMBERS_PER_LOBBY} members.`] })

export const userLobbyLimit = (field = 'members') =>
  formError({
    [field]: [
      'USER_LOBBY_LIMIT',
      `A user can be in at most ${MAX_LOBBIES_PER_USER_PER_APP} lobbies of an application.`,
    ],
  })

export const emptyMessage = () => new ApiError(400, 50006, 'Cannot send an empty message')
