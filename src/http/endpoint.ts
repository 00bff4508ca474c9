// One declaration per endpoint (issue 29): `endpoint({ method, path, auth, body, query, answers, limit, hot }, handler)`.
// From it come the Elysia route (its auth rule, its body and query schemas), its OpenAPI entry (request and answer
// schemas, through doc()), its rate limit when it is not the default one (rate-limits.ts), and for `hot: true` the
// lane's handler (lane.ts: Bun's router calls it directly) with the same body check on both paths. A domain exports
// its endpoints as a list (its module's `endpoints`); app.ts takes the routes, the lane and the limits from the lists.
import type { Server } from 'bun'
import type { StaticDecode, TObject, TSchema } from '@sinclair/typebox'
import { Elysia, type AnyElysia } from 'elysia'
import type { Caller, CallerKind } from '../core/caller'
import { type Answer, doc } from './docs'
import { type AuthRule, identity } from './identity'
import { elysiaHandler, type Handler, type LaneRoute, laneRoute } from './lane'
import type { RouteLimit } from './rate-limits'
import { bodyCheck } from './validation'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** The parameter names of a path: `/lobbies/:lobbyId/members/:userId` → `'lobbyId' | 'userId'`. */
export type ParamNames<Path extends string> = Path extends `${string}:${infer P}/${infer Rest}`
  ? P | ParamNames<`/${Rest}`>
  : Path extends `${string}:${infer P}`
    ? P
    : never

/**
 * The caller an auth rule lets through: a rule of one kind narrows it (`'user'`: a UserCaller, with its session);
 * none without a rule (the handler looks at the Authorization itself).
 */
export type CallerOf<Auth> = Auth extends null
  ? undefined
  : Auth extends CallerKind
    ? Extract<Caller, { kind: Auth }>
    : Caller

/** What a handler gets, on both paths (the lane and Elysia). */
export type EndpointRequest<Path extends string, Body, Auth = AuthRule | null> = {
  request: Request
  server: Server<unknown> | null
  params: Record<ParamNames<Path>, string>
  /** The query string (the last of repeated keys wins), read when asked. */
  query: () => Record<string, string>
  /** The caller, checked against the endpoint's auth rule (absent on routes with `auth: null`). */
  caller: CallerOf<Auth>
  /** The body, checked against `body` (decoded: its transforms applied); unknown without a schema. */
  body: Body extends TSchema ? StaticDecode<Body> : unknown
}

export type EndpointSpec<
  Path extends string,
  Body extends TSchema | undefined,
  Auth extends AuthRule | null = AuthRule | null,
> = {
  method: Method
  /** As mounted under the API prefixes, e.g. `/lobbies/:lobbyId`. */
  path: Path
  /** Who may call it; null: the handler looks at the Authorization itself (a route open to anonymous callers). */
  auth: Auth
  /** The OpenAPI tag and summary. */
  tag: string
  summary: string
  /** The body's schema, with every static rule of its fields: checked (Discord's 50035) before the handler runs. */
  body?: Body
  /**
   * A body the handler checks itself, documented only: Elysia and the lane hand it on as sent (POST /auth/login
   * answers a logged-in client whatever its body, so its body cannot be refused before the handler runs).
   */
  handlerBody?: TSchema
  /** The query's schema: documented, and checked by Elysia (not by the lane: a hot handler judges its query itself). */
  query?: TObject
  /** Path parameters as documented (not checked: the handler judges them), where not a snowflake or a plain string. */
  params?: { [P in ParamNames<Path>]?: TSchema }
  /**
   * A query the handler checks itself, documented only (OAuth2's authorize request answers its own errors, with
   * RFC 6749's error name beside Discord's).
   */
  handlerQuery?: TObject
  /** The 4XX body where a protocol has its own (OAuth2's token endpoints: RFC 6749's); Discord's error body otherwise. */
  error?: TSchema
  /** Credentials the handler reads itself (`auth: null`), as the docs' security requirements (OAuth2's client). */
  security?: Record<string, string[]>[]
  /** What it answers by status: a schema (a JSON body) or a description (204); 4XX is Discord's error body. */
  answers: Record<number, Answer>
  /** Its own rate limit, where it is not the default (rate-limits.ts DEFAULT_ROUTE_LIMIT). */
  limit?: { limit: number; windowMs: number }
  /** Answered by Bun's router directly (http/lane.ts); GET or POST. */
  hot?: boolean
}

/** The answer (status 200): a JSON value, JsonText, or a Response, or a promise of one; throws ApiError. */
export type EndpointHandler<Path extends string, Body, Auth = AuthRule | null> = (
  r: EndpointRequest<Path, Body, Auth>,
) => unknown

export type Endpoint = {
  method: Method
  path: string
  auth: AuthRule | null
  limit?: { limit: number; windowMs: number }
  /** The lane's route, for a hot endpoint. */
  lane?: LaneRoute
  /** Adds the Elysia route (with its hook: auth, schemas, docs) to an app that uses `identity`. */
  mount: (app: AnyElysia) => AnyElysia
  /** The declaration (tests hold the API document to it). */
  spec: EndpointSpec<string, TSchema | undefined>
}

/** Declare an endpoint: the one place its route, docs, limit and (hot) lane handler come from. */
export function endpoint<
  const Path extends string,
  Body extends TSchema | undefined = undefined,
  Auth extends AuthRule | null = AuthRule | null,
>(spec: EndpointSpec<Path, Body, Auth>, handler: EndpointHandler<Path, Body, Auth>): Endpoint {
  const { method, path, auth, tag, summary, body, handlerBody, query, handlerQuery, params } = spec
  const { error, security, answers, limit, hot } = spec
  if (hot && method !== 'GET' && method !== 'POST') throw new Error(`a hot endpoint is a GET or a POST: ${path}`)
  const run = handler as Handler
  // A hot endpoint checks its body itself (the lane has no Elysia hooks): one compiled check for both paths. Elysia
  // checks the others' bodies from the route's schema.
  const check = hot && body ? bodyCheck(body) : undefined
  const detail = doc(tag, summary, answers, {
    body: handlerBody ?? (check ? body : undefined),
    query: query ?? handlerQuery,
    params,
    error,
    security,
  }).detail
  const hook = {
    ...(auth === null ? {} : { auth }),
    ...(body && !check ? { body } : {}),
    ...(query ? { query } : {}),
    detail,
  }
  const handle = elysiaHandler(run, check, query !== undefined || handlerQuery !== undefined)
  return {
    method,
    path,
    auth,
    limit,
    lane: hot ? laneRoute(method as 'GET' | 'POST', path, auth, run, check) : undefined,
    mount: (app) => app.route(method, path, handle as never, hook as never) as AnyElysia,
    spec,
  }
}

/** A domain's endpoints as one Elysia plugin (with the `auth` macro). */
export function endpointRoutes(endpoints: Endpoint[]): AnyElysia {
  let app: AnyElysia = new Elysia().use(identity)
  for (const e of endpoints) app = e.mount(app)
  return app
}

/** The lane's routes of the hot endpoints. */
export const hotRoutes = (endpoints: Endpoint[]): LaneRoute[] => endpoints.flatMap((e) => (e.lane ? [e.lane] : []))

/** The endpoints' own rate limits (rate-limits.ts setRouteLimits). */
export const routeLimits = (endpoints: Endpoint[]): RouteLimit[] =>
  endpoints.flatMap((e) => (e.limit ? [{ method: e.method, path: e.path, ...e.limit }] : []))
