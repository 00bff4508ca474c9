// The hottest routes, answered by Bun's router directly ("the lane"), with the same duties as the Elysia pipeline
// (basics.ts, body.ts, cors.ts, rate-limits.ts, identity.ts): request id, client address, the 413 check, CORS, the
// per-route rate limit, the body, the caller, Discord's error bodies, the access log and the metrics, in Elysia's
// order (a POST: rate limit, then the body is read, then the caller, then the body's check, then the handler).
//
// Why: on a GET answered from the caches, Elysia's generic work per request (the context object, its hooks, response
// mapping, scheduling the after-response hook) was ~40 % of the time. The route stays declared in Elysia too, calling
// the same function (a `hot` endpoint, http/endpoint.ts, makes both from one declaration): that is the documented route, and it answers what Bun's router does not send here (HEAD,
// `/users/%40me`, `app.handle` in tests). Elysia hands `serve.routes` to Bun.serve after its own, so for the same path
// and method the lane's handler is the one Bun calls. tests/core/lane.test.ts compares both answers.
import { appState } from '../core/app'
import type { BunRequest, Server } from 'bun'
import { parseQueryFromURL } from 'elysia/parse-query'
import type { Caller } from '../core/caller'
import { ApiError, Errors } from '../core/errors'
import { beginTrace, errorFor, finish, oversized, tooLarge } from './basics'
import { parseBody } from './body'
import { corsHeaders } from './cors'
import { type AuthRule, authorize } from './identity'
import { callerAfterLimit, limit, type Looked } from './rate-limits'
import { JSON_TYPE, JsonText, jsonText, VIA } from './respond'

/**
 * What a lane handler gets: the request, its path parameters, the query string as Elysia parses it (the last of
 * repeated keys wins, read when asked), on routes with an auth rule its caller, and a POST's body as parsed
 * (http/body.ts) and checked (`check`). http/endpoint.ts types it per endpoint (EndpointRequest).
 */
type LaneRequest = {
  request: Request
  server: Server<unknown> | null
  params: Record<string, string>
  query: () => Record<string, string>
  caller: Caller
  body: unknown
}

export type Handler = (r: LaneRequest) => unknown
type Method = 'GET' | 'POST'

/** What the Elysia route's handler gets (the fields of Elysia's context the lane handlers use). */
type ElysiaContext = {
  caller?: Caller
  body?: unknown
  params: Record<string, string>
  query: Record<string, unknown>
  request: Request
  server: Server<unknown> | null
}

export type LaneRoute = {
  method: Method
  /** As mounted under the API prefixes, e.g. `/lobbies/:lobbyId`. */
  path: string
  /** null: the handler looks at the Authorization itself (a route open to anonymous callers). */
  auth: AuthRule | null
  /** The answer (status 200): a JSON value, JsonText, or a Response, or a promise of one; throws ApiError. */
  run: Handler
  /** A POST's body check (http/validation.ts bodyCheck), after the caller and before `run` (an endpoint's `body`). */
  check?: (body: unknown) => unknown
  /** The Elysia route's handler: `run` on Elysia's context, JsonText answered as a Response. */
  handle: (ctx: ElysiaContext) => unknown
}

const forElysia = (value: unknown) => (value instanceof JsonText ? jsonText(value.text, value.status) : value)
const noQuery = () => ({})

/**
 * The Elysia route's handler: `run` on Elysia's context, JsonText answered as a Response, the body checked first
 * (`check`). Destructured, as every handler Elysia reads (it prepares per request only what the source names: the
 * query only where `withQuery`). An async function: Elysia awaits only those inside its error handling (a promise it
 * merely maps, it lets reject).
 */
export function elysiaHandler(run: Handler, check: ((body: unknown) => unknown) | undefined, withQuery: boolean) {
  if (withQuery)
    return async ({ caller, body, params, query, request, server }: ElysiaContext) =>
      forElysia(
        await run({
          caller: caller!,
          body: check ? check(body) : body,
          params,
          request,
          server,
          query: () => query as Record<string, string>,
        }),
      )
  return async ({ caller, body, params, request, server }: ElysiaContext) =>
    forElysia(await run({ caller: caller!, body: check ? check(body) : body, params, request, server, query: noQuery }))
}

/** A lane route (http/endpoint.ts makes one for each hot endpoint). */
export function laneRoute(
  method: Method,
  path: string,
  auth: AuthRule | null,
  run: Handler,
  check?: (body: unknown) => unknown,
): LaneRoute {
  const handle = elysiaHandler(run, check, true)
  return { method, path, auth, run, handle, check }
}

const PREFIXES = ['/api/v9', '/api/v10', '/api']

function queryOf(url: string): Record<string, string> {
  const at = url.indexOf('?')
  return at === -1 ? {} : parseQueryFromURL(url, at + 1)
}

/** What this module holds per App (core/app.ts). */
const newLane = () => ({
  answered: 0,
})
declare module '../core/app' {
  interface AppState {
    lane: ReturnType<typeof newLane>
  }
}
const held = appState('lane', newLane)
/** How many requests the lane has answered (tests: proof that Bun's router sends them here). */
export const laneAnswered = () => held().answered

function answer(route: string, { method, auth, run, check }: LaneRoute) {
  return (request: BunRequest, server: Server<unknown>): Response | Promise<Response> => {
    held().answered++
    const trace = beginTrace(request, server)
    if (oversized(request)) return tooLarge(request, trace)
    const headers: Record<string, string> = { 'x-request-id': trace.id, via: VIA }
    const done = (response: Response) => {
      finish(request.method, route, response.status, trace)
      return response
    }
    const failed = (error: unknown) => done(errorFor('UNKNOWN', error, request.method, route, headers))
    try {
      corsHeaders(request, headers)
      const looked = limit(route, request, request.params, headers, server)
      const params = request.params
      const query = () => queryOf(request.url)
      if (method === 'POST')
        return readBody(request, route)
          .then((body) => {
            const post = (caller: Caller | undefined) =>
              run({ request, server, params, query, caller: caller!, body: check ? check(body) : body })
            if (!auth) return post(undefined)
            // Asked again after the body (from the token cache): a token ended while the body streamed fails.
            const again = (looked: Looked) => {
              const caller = callerAfterLimit(request, looked)
              return caller instanceof Promise
                ? caller.then((c) => post(authorize(c, auth)))
                : post(authorize(caller, auth))
            }
            return looked instanceof Promise ? looked.then(again) : again(looked)
          })
          .then((v) => done(respond(v, headers)), failed)
      // A GET runs once the limit has its caller (at once from the token cache): the caller it resolved is the caller.
      const get = (looked: Looked) => {
        const caller = auth ? authorize(looked ?? undefined, auth) : undefined
        return run({ request, server, params, query, caller: caller!, body: undefined })
      }
      const value = looked instanceof Promise ? looked.then(get) : get(looked)
      // Handlers that read the stores answer a promise; one that answers at once is answered in this step.
      if (value instanceof Promise) return value.then((v) => respond(v, headers)).then(done, failed)
      return done(respond(value, headers))
    } catch (error) {
      return failed(error)
    }
  }
}

/** The body as Elysia's parse step hands it to the route: its content type without parameters, our parser. */
async function readBody(request: Request, route: string): Promise<unknown> {
  let type = request.body ? (request.headers.get('content-type') ?? '') : ''
  const semicolon = type.indexOf(';')
  if (semicolon !== -1) type = type.slice(0, semicolon)
  try {
    return await parseBody(request, route, type)
  } catch (error) {
    // What Elysia answers to a failed parse (basics.ts errorFor, 'PARSE'): our parser's refusal, else invalid JSON.
    throw error instanceof ApiError ? error : Errors.invalidJson()
  }
}

function respond(value: unknown, headers: Record<string, string>): Response {
  if (value instanceof JsonText) {
    headers['content-type'] = JSON_TYPE
    return new Response(value.text, { status: value.status, headers })
  }
  if (value instanceof Response) {
    for (const name in headers) value.headers.set(name, headers[name])
    return value
  }
  headers['content-type'] = JSON_TYPE
  return new Response(JSON.stringify(value), { headers })
}

type LaneHandler = ReturnType<typeof answer>

/** Bun.serve `routes` for these lane routes under every API prefix, each path with its methods. */
export function laneRoutes(routes: LaneRoute[]): Record<string, Partial<Record<Method, LaneHandler>>> {
  const out: Record<string, Partial<Record<Method, LaneHandler>>> = {}
  for (const r of routes)
    for (const prefix of PREFIXES) {
      const route = prefix + r.path
      out[route] ??= {}
      out[route][r.method] = answer(route, r)
    }
  return out
}
