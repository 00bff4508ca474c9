// The console's errors, in Discord's body: who may not enter, and what an operator must do first.
import { ApiError, formError } from '../core/errors'

/** Not an operator: every console route answers this, whatever it is. */
export const notOperator = () => new ApiError(403, 50001, 'Missing Access')

/** An operator without a second factor: the console needs elevation, which needs MFA. */
export const operatorNeedsMfa = () =>
  new ApiError(403, 50001, 'Enable two-factor authentication (Settings → Security) to use the console')

/** A state-changing request sent from another site (its Origin or Sec-Fetch-Site says so). */
export const crossSite = () => new ApiError(403, 50001, 'Cross-site requests are refused')

/** An operator may not lock, delete or strip MFA from their own account through the console. */
export const notOnSelf = () =>
  formError({ user_id: ['ADMIN_SELF', 'An operator cannot do this to their own account.'] })

export const reasonRequired = () =>
  formError({ reason: ['BASE_TYPE_REQUIRED', 'A reason is required for this action.'] })
