// The errors of the HTTP layer itself (bodies, statuses Elysia raises), with Discord's body shape.
import { ApiError } from '../core/errors'

export const unsupportedMediaType = (type: string) =>
  new ApiError(415, 0, `Unsupported content type: ${type || 'none'}`)

export const requestTimeout = () => new ApiError(408, 0, 'Request body not received in time')

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  415: 'Unsupported Media Type',
}

/** A 4xx Elysia raised itself (e.g. 405), answered with our body: `{message: "405: Method Not Allowed", code: 0}`. */
export const statusError = (status: number) => new ApiError(status, 0, `${status}: ${STATUS_TEXT[status] ?? 'Error'}`)

/** A per-route limit (http/rate-limits.ts) refused the request: Discord's 429 with its headers. */
export const tooMany = (retryAfterMs: number) =>
  new ApiError(
    429,
    0,
    'You are being rate limited.',
    undefined,
    { 'Retry-After': String(Math.ceil(retryAfterMs / 1000)), 'X-RateLimit-Scope': 'user' },
    { retry_after: retryAfterMs / 1000, global: false },
  )
