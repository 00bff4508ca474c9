// The errors of the account primitives every flow shares (passwords, phone numbers), with Discord's codes.
import { formError } from '../core/errors'

/** A locked account (`user lock`): nothing authenticates until the password is reset. */
export const accountCompromised = () =>
  formError({
    login: [
      'ACCOUNT_COMPROMISED_RESET_PASSWORD',
      'Your account has been flagged as compromised. Reset your password to continue.',
    ],
  })

/** A wrong current password where an account change asks for it. */
export const passwordMismatch = () => formError({ password: ['PASSWORD_DOES_NOT_MATCH', 'Password does not match.'] })

/** A password that does not meet today's policy, on `field`. */
export const passwordRefused = (field: string, problem: [code: string, message: string]) =>
  formError({ [field]: problem })

/** Not an E.164 number, or a number no account may add (blocked by an account revert). */
export const phoneNumberInvalid = (field = 'phone') =>
  formError({ [field]: ['PHONE_NUMBER_INVALID', 'Invalid phone number.'] })

/** A phone token that is unknown, used, for another purpose, or for a number that cannot be taken. */
export const phoneVerificationInvalid = () =>
  formError({ phone_token: ['PHONE_VERIFICATION_INVALID', 'Invalid phone verification.'] })
