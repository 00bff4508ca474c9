// The errors of login, registration, recovery and handoff, with Discord's codes and messages.
import { ApiError, formError } from '../core/errors'

export const invalidLogin = () =>
  formError({
    login: ['INVALID_LOGIN', 'Login or password is invalid.'],
    password: ['INVALID_LOGIN', 'Login or password is invalid.'],
  })

export { accountCompromised } from '../accounts/errors'

export const accountDisabled = () => new ApiError(400, 20013, 'This account is disabled')

export const accountScheduledForDeletion = () => new ApiError(400, 20011, 'This account is scheduled for deletion')

export const newLoginLocation = () =>
  formError({ login: ['ACCOUNT_LOGIN_VERIFICATION_EMAIL', 'New login location detected, please check your e-mail.'] })

/** A mailed token (verification, new location, reset, revert) that is unknown, used or expired. */
export const tokenInvalid = () => formError({ token: ['TOKEN_INVALID', 'Invalid or expired token.'] })

export const emailInvalid = () => formError({ email: ['EMAIL_TYPE_INVALID_EMAIL', 'Not a well formed email address.'] })

export const emailTaken = () => formError({ email: ['EMAIL_ALREADY_REGISTERED', 'Email is already registered.'] })

/** A registration that lost the race for its username. */
export const usernameTaken = () => formError({ username: ['USERNAME_ALREADY_TAKEN', 'Username is unavailable.'] })

export const handoffTokenInvalid = () =>
  formError({ handoff_token: ['HANDOFF_TOKEN_INVALID', 'Invalid handoff token.'] })

export const verificationCodeInvalid = () => new ApiError(400, 50037, 'Invalid verification code')

/** A reset asked by phone for an account whose phone is also its second factor: the link went by e-mail. */
export const phoneResetByEmail = () =>
  new ApiError(400, 70009, 'This phone number cannot be used to reset your password; a reset link was sent by e-mail')

export const phoneVerificationRequired = () => new ApiError(400, 70007, 'Phone verification is required')
