// The errors of OAuth2: RFC 6749 bodies ({error, error_description}) for the token endpoints, rendered by http/basics
// like any ApiError, and the authorize request's form errors, which carry the RFC 6749 name beside Discord's.
import { ApiError, addFieldError, errorTree } from '../core/errors'

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unsupported_token_type'

export class OAuthError extends ApiError {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    status = error === 'invalid_client' ? 401 : 400,
    headers?: Record<string, string>,
  ) {
    super(status, 0, description, undefined, headers)
  }

  override body(): Record<string, unknown> {
    return { error: this.error, error_description: this.description }
  }
}

/** 400 50035 naming the field, with the RFC 6749 error name alongside for OAuth2 clients. */
export function invalidAuthorizeRequest(field: string, code: string, message: string, oauthError: string): ApiError {
  const tree = errorTree()
  addFieldError(tree, field, { code, message })
  return new ApiError(400, 50035, 'Invalid Form Body', tree, undefined, {
    error: oauthError,
    error_description: message,
  })
}

/** An authorization id (GET /oauth2/tokens) that is not the caller's, or no longer live. */
export const unknownToken = () => new ApiError(404, 10012, 'Unknown Token')

/**
 * An event webhooks URL this server will not call, or one that did not answer the PING as Discord asks; `field` names
 * it (the application's `event_webhooks_url`, a lobby's `override_event_webhooks_url`).
 */
export const eventWebhookUrlRefused = (message: string, field = 'event_webhooks_url') =>
  new ApiError(
    400,
    50035,
    'Invalid Form Body',
    addFieldError(errorTree(), field, { code: 'BASE_TYPE_INVALID', message }),
  )
