// Cross-cutting HTTP behaviour: body size limit, Discord error bodies, one log line per request.
import { Elysia } from 'elysia'
import { config } from '../config'
import { ApiError, Errors } from '../core/errors'
import { log } from '../core/log'
import { parseBody } from './body'
import { rateLimits } from './rate-limits'
import { validationTree } from './validation'

const started = new WeakMap<Request, number>()

function errorResponse(error: ApiError): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { 'content-type': 'application/json', ...error.headers },
  })
}

export const httpBasics = new Elysia({ name: 'http-basics' })
  .use(rateLimits)
  .onRequest(({ request }) => {
    started.set(request, performance.now())
    const length = Number(request.headers.get('content-length') ?? 0)
    if (length > config().maxBodyBytes) return errorResponse(Errors.entityTooLarge())
  })
  .onParse({ as: 'global' }, ({ request, route }, contentType) => parseBody(request, route, contentType))
  .onError({ as: 'global' }, ({ code, error, request }) => {
    if (error instanceof ApiError) return errorResponse(error)
    switch (code) {
      case 'VALIDATION':
        return errorResponse(Errors.invalidFormBody(validationTree(error.all as never)))
      case 'PARSE': {
        // Our parser's own refusals (413, 415, 408, 50109) arrive wrapped in Elysia's ParseError.
        const cause = (error as { cause?: unknown }).cause
        return errorResponse(cause instanceof ApiError ? cause : Errors.invalidJson())
      }
      case 'NOT_FOUND':
        return errorResponse(Errors.notFound())
    }
    // Elysia's own status errors (e.g. 413 from Bun's body limit) keep their status with our body.
    const status = (error as { status?: number })?.status
    if (status === 413) return errorResponse(Errors.entityTooLarge())
    if (typeof status === 'number' && status >= 400 && status < 500 && code !== 'UNKNOWN') {
      return errorResponse(new ApiError(status, 0, `${status}: ${statusText(status)}`))
    }
    log.error('unhandled error', { method: request.method, url: new URL(request.url).pathname, error: String((error as Error)?.stack ?? error) })
    return errorResponse(Errors.internal())
  })
  .onAfterResponse({ as: 'global' }, ({ request, route, set }) => {
    const start = started.get(request)
    const ms = start === undefined ? 0 : performance.now() - start
    log.info('request', { method: request.method, route: route || new URL(request.url).pathname, status: set.status ?? 200, ms: ms.toFixed(1) })
  })
  .as('global')

function statusText(status: number): string {
  return { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed', 415: 'Unsupported Media Type' }[status] ?? 'Error'
}
