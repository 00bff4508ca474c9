// RFC 6749 error bodies ({error, error_description}) for the token endpoints, rendered by http/basics like any ApiError.
import { ApiError } from '../core/errors'

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
