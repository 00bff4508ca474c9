// Errors of GET /experiments: Discord's form error for a bad query value; 401 for `platform` without a valid token.
import { Errors, formError } from '../core/errors'
import { PLATFORMS } from './definitions'

export const badBoolean = (field: string) =>
  formError({ [field]: ['BOOLEAN_TYPE_CONVERT', 'Must be either true or false.'] })

export const badPlatform = () =>
  formError({ platform: ['BASE_TYPE_CHOICES', `Value must be one of ${JSON.stringify(PLATFORMS)}.`] })

/** `platform` needs valid authentication; so does an Authorization header that does not resolve. */
export const authenticationRequired = () => Errors.unauthorized()
