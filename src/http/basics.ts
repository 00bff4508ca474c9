// Cross-cutting HTTP behaviour: body size limit, Discord error bodies, a request id, one access-log line and the
// request metrics per request.
//
// The access log names the route template (`/api/v9/lobbies/:lobbyId`), never the path, query or fragment, so no token
// in a URL (/wasntme/<token>, ?state=...) reaches it; a request no route matched logs `<unmatched>`. The status is
// the one sent: Elysia's `set.status` stays 200 when a handler or the error hook returns its own Response, so the
// hook reads the Response itself.
import { loggableError } from '../db/errors'
import { appState } from '../core/app'
import { Elysia, StatusMap } from 'elysia'
import { config } from '../config'
import { ApiError, Errors } from '../core/errors'
import { accessLog, log } from '../core/log'
import { recordRequest } from '../core/metrics'
import { parseBody } from './body'
import { clientIp } from './client-ip'
import { statusError } from './errors'
import { JSON_TYPE, VIA } from './respond'
import { rateLimits } from './rate-limits'
import { type ElysiaValidationError, elysiaValidationTree } from './validation'

/** What the access log needs of one request, kept on Elysia's per-request context. */
export type Trace = { start: number; id: string; ip: string; status: number }
const TRACE = '__trace'
const SENT_BODY = '__sentBody'
type Traced = { [TRACE]?: Trace; [SENT_BODY]?: unknown }

export const UNMATCHED = '<unmatched>'

// Request ids: X-Request-Id when the caller (e.g. nginx's $request_id) sends a plain one, else this process's random
// prefix and a counter: unique without a random draw per request.
const ID_PATTERN = /^[\w.:@+=-]{1,128}$/
const idPrefix = crypto.randomUUID().slice(0, 8)
/** What this module holds per App (core/app.ts). */
const newHttpBasics = () => ({
  notFoundPage: undefined as NotFoundPage | undefined,
  idCounter: 0,
})
declare module '../core/app' {
  interface AppState {
    httpBasics: ReturnType<typeof newHttpBasics>
  }
}
const held = appState('httpBasics', newHttpBasics)

function requestId(header: string | null): string {
  return header !== null && ID_PATTERN.test(header) ? header : `${idPrefix}-${(++held().idCounter).toString(36)}`
}

type IpSource = Parameters<typeof clientIp>[1]

/** A request starts: its time, id and client address. */
export function beginTrace(request: Request, server: IpSource): Trace {
  return {
    start: performance.now(),
    id: requestId(request.headers.get('x-request-id')),
    ip: clientIp(request, server) || '-',
    status: 0,
  }
}

/** A request announcing a body past MAX_BODY_BYTES: answered 413 before routing. */
export function oversized(request: Request): boolean {
  return Number(request.headers.get('content-length') ?? 0) > config().maxBodyBytes
}

/** The 413 for an oversized request, logged as unmatched (no route looked at it). */
export function tooLarge(request: Request, trace: Trace): Response {
  const response = errorResponse(Errors.entityTooLarge())
  response.headers.set('x-request-id', trace.id)
  finish(request.method, UNMATCHED, 413, trace)
  return response
}

export function errorResponse(error: ApiError, headers?: Record<string, string>): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { ...headers, 'content-type': JSON_TYPE, via: VIA, ...error.headers },
  })
}

/** The access-log line and the metrics of a finished request. */
export function finish(method: string, route: string, status: number, trace: Trace): void {
  const ms = performance.now() - trace.start
  accessLog(method, route, status, ms, trace.ip, trace.id)
  recordRequest(method, route, status, ms / 1000)
}

/** A value Elysia answers as JSON: a plain object or an array (not a Response, a string, a file or a stream). */
function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false
  if (Array.isArray(value)) return true
  const proto = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function statusOf(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'string') return (StatusMap as Record<string, number>)[value] ?? 200
  return 200
}

/** An answer of its own to a request no route matched (the web client's HTML 404 for a browser), or undefined. */
export type NotFoundPage = (request: Request) => Promise<Response> | undefined

/** The web client installs its 404 page here (the API keeps Discord's JSON 404). */
export function setNotFoundPage(page: NotFoundPage | undefined): void {
  held().notFoundPage = page
}

export const httpBasics = new Elysia({ name: 'http-basics' })
  .use(rateLimits)
  // Every hook destructures the context and never hands it to a function: Elysia reads the hooks' source to decide
  // what each request prepares (headers object, query, cookies), and a context passed whole means all of it.
  .onRequest((ctx) => {
    const { request, set, server } = ctx
    const trace = beginTrace(request, server)
    ;(ctx as Traced)[TRACE] = trace
    set.headers['x-request-id'] = trace.id
    set.headers.via = VIA
    // Answered before routing: Elysia runs no after-response hook for it, so it is logged there.
    if (oversized(request)) return tooLarge(request, trace)
  })
  // The body as parsed is kept for the error hook: Elysia's cleaner rewrites a body to its schema's shape before the
  // check (a string where a list belongs becomes a list of its characters), and errors are judged on what was sent.
  .onParse({ as: 'global' }, async (ctx, contentType) => {
    const { request, route } = ctx
    const body = await parseBody(request, route, contentType)
    ;(ctx as Traced)[SENT_BODY] = body
    return body
  })
  // A JSON value is answered by Bun's Response.json, whose content type is `application/json;charset=utf-8` unless
  // one is set: say Discord's exact `application/json` (respond.ts JSON_TYPE). A Response a handler built keeps its own.
  .onAfterHandle({ as: 'global' }, ({ responseValue, set }) => {
    if (isJsonValue(responseValue)) set.headers['content-type'] = JSON_TYPE
  })
  .onError({ as: 'global' }, (ctx) => {
    const { code, error, request, route } = ctx as typeof ctx & { route?: string }
    const trace = (ctx as Traced)[TRACE]
    const page = code === 'NOT_FOUND' ? held().notFoundPage?.(request) : undefined
    if (page)
      return page.then((response) => {
        if (trace) trace.status = response.status
        return response
      })
    const response = errorFor(code, error, request.method, route, undefined, (ctx as Traced)[SENT_BODY])
    if (trace) trace.status = response.status
    return response
  })
  .onAfterResponse({ as: 'global' }, (ctx) => {
    const trace = (ctx as Traced)[TRACE]
    if (!trace) return
    const { request, route, set, responseValue } = ctx as typeof ctx & { responseValue?: unknown }
    let status = trace.status
    if (!status) {
      if (responseValue instanceof Response) status = responseValue.status
      // A WebSocket route that upgraded the connection: its handler answered nothing, the socket got 101.
      else if (responseValue === undefined && route && request.headers.get('upgrade')?.toLowerCase() === 'websocket')
        status = 101
      else status = statusOf(set.status)
    }
    finish(request.method, route || UNMATCHED, status, trace)
  })
  .as('global')

/** The answer to an error a route raised: Discord's body for ours and Elysia's, a logged 500 for anything else. */
export function errorFor(
  code: string | number,
  error: unknown,
  method: string,
  route: string | undefined,
  headers?: Record<string, string>,
  sentBody?: unknown,
): Response {
  if (error instanceof ApiError) return errorResponse(error, headers)
  switch (code) {
    case 'VALIDATION':
      return errorResponse(Errors.invalidFormBody(elysiaValidationTree(error as ElysiaValidationError, sentBody)))
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
    return errorResponse(statusError(status))
  }
  // The route template, not the path: a path may carry a token.
  log.error('unhandled error', {
    method,
    route: route || UNMATCHED,
    error: loggableError(error),
  })
  return errorResponse(Errors.internal(), headers)
}
