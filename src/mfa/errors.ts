// The errors of second factors, tickets and elevation, with Discord's codes and messages.
import { ApiError, formError } from '../core/errors'

export const alreadyEnrolled = () => new ApiError(400, 60001, 'Already enrolled in two factor')

export const notEnrolled = () => new ApiError(400, 60002, 'Two factor is not enabled for this account')

/** 401 60003 with the `mfa` object a client answers through POST /mfa/finish. */
export const elevationRequired = (mfa: { ticket: string; methods: Record<string, unknown>[] }) =>
  new ApiError(401, 60003, 'Two factor is required for this operation', undefined, undefined, { mfa })

export const invalidSecret = () => new ApiError(400, 60005, 'Invalid two-factor secret')

export const invalidTicket = () => new ApiError(400, 60006, 'Invalid two-factor auth ticket')

export const invalidCode = (message = 'Invalid two-factor code') => new ApiError(400, 60008, message)

/** 60008's message for a right TOTP code whose time step was already accepted (the code stays a wrong guess). */
export const CODE_ALREADY_USED = 'This two-factor code was already used. Wait for the next code.'

export const smsNotEnabled = () => new ApiError(400, 60010, 'SMS authentication is not enabled')

export const smsCannotBeEnabled = () => new ApiError(400, 60012, 'SMS authentication cannot be enabled')

export const phoneTaken = () =>
  formError({ phone_token: ['PHONE_NUMBER_ALREADY_TAKEN', 'This phone number is already used by another account.'] })
