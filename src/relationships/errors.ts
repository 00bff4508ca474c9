// The errors of relationships that core/errors.ts does not already name, with Discord's statuses, codes and messages.
import { ApiError, formError } from '../core/errors'
import { MAX_FRIENDS, MAX_OUTGOING_REQUESTS } from './limits'

/** A request the other side does not take: requests refused by a block (either way) or to a bot, as Discord answers. */
export const requestsDisabled = () => new ApiError(400, 80000, 'Incoming friend requests disabled.')
export const selfRequest = () => new ApiError(400, 80003, 'Cannot send friend request to self.')
/** POST by username: no such user (Discord's answer, the same whatever the reason, so it tells nothing more). */
export const noSuchTag = () => new ApiError(400, 80004, 'No users with DiscordTag exist')
export const alreadyFriends = () => new ApiError(400, 80007, 'You are already friends with that user.')
/** PATCH of a nickname on someone who is not a friend. */
export const notFriends = () => new ApiError(400, 80006, 'You need to be friends in order to make this change.')
export const maxFriends = () => new ApiError(400, 30002, `Maximum number of friends reached (${MAX_FRIENDS})`)
export const maxOutgoing = () =>
  new ApiError(400, 30002, `Maximum number of pending friend requests reached (${MAX_OUTGOING_REQUESTS})`)
/** A game invite (or join request) to someone who is not a friend, Discord-wide or in the game, or with a block. */
export const cannotInvite = () => new ApiError(400, 50007, 'Cannot send messages to this user')
/** A JOIN invite needs the inviter's (a JOIN_REQUEST the asked user's) activity of the game with a join secret. */
export const notJoinable = () =>
  formError({
    recipient_id: ['ACTIVITY_NOT_JOINABLE', 'No activity of this application with a party and a join secret.'],
  })
