// The errors of application commands that core/errors.ts does not already name.
import { ApiError } from '../core/errors'

export const unknownCommand = () => new ApiError(404, 10063, 'Unknown application command')

export const maxCommands = () => new ApiError(400, 30032, 'Maximum number of application commands reached')
