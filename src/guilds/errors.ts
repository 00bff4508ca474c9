// The errors of the guild model that core/errors.ts does not already name, with Discord's codes and messages.
import { ApiError, formError } from '../core/errors'

/** The owner tried to leave its own guild. */
export const invalidGuild = () => new ApiError(400, 50055, 'Invalid Guild')

export const notTextChannel = () => new ApiError(400, 50008, 'Cannot send messages in a non-text channel')

export const invalidPermissions = () => formError({ permissions: ['BASE_TYPE_INVALID', 'Invalid permissions value.'] })

export const everyoneUndeletable = () =>
  formError({ role_id: ['BASE_TYPE_INVALID', 'The @everyone role cannot be deleted.'] })
