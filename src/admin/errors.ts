// The console's errors, in Discord's body: who may not enter, and what an operator must do first.
import { ApiError, addFieldError, errorTree, formError } from '../core/errors'

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

/** A rotation or a close confirmed by typing the name shown: what was typed is not it. */
export const notConfirmed = () =>
  formError({ confirm: ['ADMIN_NOT_CONFIRMED', 'Type the name exactly as shown to confirm.'] })

/** The definitions file refused: every problem, each with its path, under `definitions`. */
export const definitionsRefused = (problems: string[]) => {
  const tree = errorTree()
  for (const message of problems.slice(0, 100))
    addFieldError(tree, 'definitions', { code: 'EXPERIMENTS_INVALID', message })
  return new ApiError(400, 50035, 'Invalid Form Body', tree)
}

/** Another load happened since the operator opened the definitions. */
export const staleDefinitions = () =>
  formError({ version: ['ADMIN_STALE', 'The definitions changed since you opened them. Reload, then edit again.'] })

/** An experiment or a target the preview cannot evaluate (unknown, or the wrong kind of id). */
export const experimentTargetRefused = (message: string) => formError({ target: ['ADMIN_UNKNOWN', message] })
