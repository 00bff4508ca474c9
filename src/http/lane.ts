// The hottest GET routes, answered by Bun's router directly ("the lane"), with the same duties as the Elysia
// pipeline (basics.ts, cors.ts, rate-limits.ts, identity.ts): request id, client address, the 413 check, CORS, the
// per-route rate limit, the caller, Discord's error bodies, the access log and the metrics.
//
// Why: on a GET answered from the caches, Elysia's generic work per request (the context object, its hooks, response
// mapping, scheduling the after-response hook) was ~40 % of the time. The route stays declared in Elysia too, calling
// the same function: that is the documented route, and it answers what Bun's router does not send here (HEAD,
// `/users/%40me`, `app.handle` in tests). Elysia hands `serve.routes` to Bun.serve after its own, so for the same path
// and method the lane's handler is the one Bun calls. tests/core/lane.test.ts compares both answers.
import type { BunRequest, Server } from 'bun'
import { parseQueryFromURL } from 'elysia/parse-query'
import { type Caller, resolveAuthorization } from '../core/caller'
import { beginTrace, errorFor, finish, oversized, tooLarge } from './basics'
import { corsHeaders } from './cors'
import { type AuthRule, authorize } from './identity'
import { limit } from './rate-limits'
import { JSON_TYPE, JsonText, jsonText } from './respond'

/** What a lane handler gets: the request, its path parameters and, on routes with an auth rule, its caller. */
export type LaneRequest<P extends string = string> = {
  request: Request
  server: Server<unknown> | null
  params: Record<P, string>
  /** The query string as Elysia parses it (the last of repeated keys wins), read when asked. */
  query: () => Record<string, string>
}
export type LaneCallerRequest<P extends string = string> = LaneRequest<P> & { caller: Caller }

type Handler = (r: LaneCallerRequest) => unknown

/** What the Elysia route's handler gets (the fields of Elysia's context the lane handlers use). */
type ElysiaContext = {
  caller?: Caller
  params: Record<string, string>
  query: Record<string, unknown>
  request: Request
  server: Server<unknown> | null
}

export type LaneRoute = {
  /** As mounted under the API prefixes, e.g. `/lobbies/:lobbyId`. */
  path: string
  /** null: the handler looks at the Authorization itself (a route open to anonymous callers). */
  auth: AuthRule | null
  /** The answer (status 200): a JSON value, JsonText, or a Response, or a promise of one; throws ApiError. */
  run: Handler
  /** The Elysia route's handler: `run` on Elysia's context, JsonText answered as a Response. */
  handle: (ctx: ElysiaContext) => unknown
}

function route(path: string, auth: AuthRule | null, run: Handler): LaneRoute {
  const forElysia = (value: unknown) => (value instanceof JsonText ? jsonText(value.text) : value)
  // Destructured, as every handler Elysia reads (it prepares per request only what the source names).
  const handle = ({ caller, params, query, request, server }: ElysiaContext) => {
    const value = run({ caller: caller!, params, request, server, query: () => query as Record<string, string> })
    return value instanceof Promise ? value.then(forElysia) : forElysia(value)
  }
  return { path, auth, run, handle }
}

/** A GET route for the lane whose callers must pass `auth`; `handle` is what the Elysia route calls. */
export function laneGet<P extends string>(
  path: string,
  auth: AuthRule,
  handler: (r: LaneCallerRequest<P>) => unknown,
): LaneRoute {
  return route(path, auth, handler as Handler)
}

/** A GET route for the lane open to anonymous callers. */
export function laneGetOpen<P extends string>(path: string, handler: (r: LaneRequest<P>) => unknown): LaneRoute {
  return route(path, null, handler as Handler)
}

const PREFIXES = ['/api/v9', '/api/v10', '/api']

function queryOf(url: string): Record<string, string> {
  const at = url.indexOf('?')
  return at === -1 ? {} : parseQueryFromURL(url, at + 1)
}

let answered = 0
/** How many requests the lane has answered (tests: proof that Bun's router sends them here). */
export const laneAnswered = () => answered

function answer(route: string, { auth, run }: LaneRoute) {
  return (request: BunRequest, server: Server<unknown>): Response | Promise<Response> => {
    answered++
    const trace = beginTrace(request, server)
    if (oversized(request)) return tooLarge(request, trace)
    const headers: Record<string, string> = { 'x-request-id': trace.id }
    const done = (response: Response) => {
      finish(request.method, route, response.status, trace)
      return response
    }
    const failed = (error: unknown) => done(errorFor('UNKNOWN', error, request.method, route, headers))
    try {
      corsHeaders(request, headers)
      limit(route, request, request.params, headers, server)
      const caller = auth ? authorize(resolveAuthorization(request.headers.get('authorization')), auth) : undefined
      const params = request.params
      const value = run({ request, server, params, query: () => queryOf(request.url), caller: caller! })
      // Most answers are ready at once; a handler that awaits (a linked channel) is answered when it settles.
      if (value instanceof Promise) return value.then((v) => respond(v, headers)).then(done, failed)
      return done(respond(value, headers))
    } catch (error) {
      return failed(error)
    }
  }
}

function respond(value: unknown, headers: Record<string, string>): Response {
  if (value instanceof JsonText) {
    headers['content-type'] = JSON_TYPE
    return new Response(value.text, { headers })
  }
  if (value instanceof Response) {
    for (const name in headers) value.headers.set(name, headers[name])
    return value
  }
  headers['content-type'] = JSON_TYPE
  return new Response(JSON.stringify(value), { headers })
}

/** Bun.serve `routes` for these lane routes under every API prefix (GET only). */
export function laneRoutes(routes: LaneRoute[]): Record<string, { GET: ReturnType<typeof answer> }> {
  const out: Record<string, { GET: ReturnType<typeof answer> }> = {}
  for (const r of routes)
    for (const prefix of PREFIXES) {
      const route = prefix + r.path
      out[route] = { GET: answer(route, r) }
    }
  return out
}
