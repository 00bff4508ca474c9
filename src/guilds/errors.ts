// The errors of the guild model that core/errors.ts does not already name, with Discord's codes and messages.
import { ApiError, formError } from '../core/errors'

/** The owner tried to leave its own guild. */
export const invalidGuild = () => new ApiError(400, 50055, 'Invalid Guild')

export const notTextChannel = () => new ApiError(400, 50008, 'Cannot send messages in a non-text channel')

export const invalidPermissions = () => formError({ permissions: ['BASE_TYPE_INVALID', 'Invalid permissions value.'] })

export const everyoneUndeletable = () =>
  formError({ role_id: ['BASE_TYPE_INVALID', 'The @everyone role cannot be deleted.'] })

export const cannotEditOthers = () => new ApiError(403, 50005, 'Cannot edit a message authored by another user')

/** A reply to a message that is not in the channel (Discord's form error on message_reference). */
export const unknownReplyTarget = () =>
  formError({ message_reference: ['MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message'] })

export const emptyMessage = () => new ApiError(400, 50006, 'Cannot send an empty message')

export const tooOldToBulkDelete = () =>
  new ApiError(400, 50034, 'You can only bulk delete messages that are under 14 days old.')

export const maxPins = () => new ApiError(400, 30003, 'Maximum number of pins reached (50)')

export const maxReactions = () => new ApiError(400, 30010, 'Maximum number of reactions reached (20)')

/** A custom emoji (the model has none) or text that is not a unicode emoji. */
export const unknownEmoji = () => new ApiError(400, 10014, 'Unknown Emoji')

export const invalidTimeout = () =>
  formError({
    communication_disabled_until: [
      'INVALID_COMMUNICATION_DISABLED_TIMESTAMP',
      'Invalid communication disabled timestamp',
    ],
  })

export const unknownBan = () => new ApiError(404, 10026, 'Unknown Ban')

export const bannedFromGuild = () => new ApiError(403, 40007, 'The user is banned from this guild.')

/** A bot's managed role deleted, given or taken by hand (Discord's 50028). */
export const managedRole = () => new ApiError(400, 50028, 'Invalid Role')

/** A DM the rules refuse: a block either way, no friendship or shared guild or lobby, an unknown user, a bot's bot. */
export const cannotMessageUser = () => new ApiError(403, 50007, 'Cannot send messages to this user')
