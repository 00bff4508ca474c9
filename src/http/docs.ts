// OpenAPI document of every route at /api/docs/json, built from the routes' own schemas (so it stays true) by
// @elysiajs/openapi's generator, then completed here: request bodies under the content types the server accepts (the
// generator leaves them empty because of the app-wide body parser), each with its example, path parameters as the
// routes read them, the security schemes (user token, `Bot` token, OAuth2 `Bearer`) that the `auth` macro names per
// route (http/identity.ts), and tag descriptions. Routes declare their answers, and the bodies they check by hand,
// with doc(). A Swagger UI page at /api/docs (script and styles embedded: it works offline) with a working Authorize
// button. The Gateway's reference (/api/docs/gateway) is gateway/docs.ts. tests/core/docs*.test.ts send every example
// to its route and check real answers against the documented schemas.
import { appState } from '../core/app'
import { toOpenAPISchema } from '@elysiajs/openapi'
import { OptionalKind, Type, type IntegerOptions, type TObject } from '@sinclair/typebox'
import { Elysia, t, type AnyElysia, type DocumentDecoration, type TSchema } from 'elysia'
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerJs from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import { VERSION } from '../version'

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>API reference</title><link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/docs/json', dom_id: '#swagger-ui', persistAuthorization: false })</script>
</body></html>`

/** The security scheme names the `auth` macro puts on routes. */
export const SECURITY = { user: 'UserToken', bot: 'BotToken', bearer: 'OAuth2Bearer', client: 'OAuth2Client' } as const

const securitySchemes = {
  [SECURITY.user]: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: "A user's session token, sent as it is (`Authorization: <token>`), as Discord's clients send it.",
  },
  [SECURITY.bot]: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: "An application's bot token with its prefix: enter `Bot <token>`.",
  },
  [SECURITY.bearer]: {
    type: 'http',
    scheme: 'bearer',
    description: 'An OAuth2 access token (`Authorization: Bearer <token>`); the scopes a route needs are listed on it.',
  },
  [SECURITY.client]: {
    type: 'http',
    scheme: 'basic',
    description:
      "An application's client id and secret, for the token endpoints (or client_id and client_secret in the form).",
  },
}

const TAGS: [name: string, description: string][] = [
  ['auth', 'Registration, login, sessions, e-mail verification, password reset and account recovery'],
  ['mfa', 'Second factors (authenticator app, backup codes, SMS, security keys and passkeys) and elevation (60003)'],
  ['users', 'The current user, its settings and its servers; other users'],
  ['usernames', 'Username rules, availability and suggestions'],
  ['oauth2', 'Applications, authorization codes with PKCE, tokens'],
  ['lobbies', 'Lobbies: members, metadata, secrets, messages, channel links'],
  ['relationships', 'Friends, friend requests and blocks'],
  ['partner-sdk', "Provisional accounts' tokens: a game backend's Bot token, an OIDC ID token"],
  ['admin', "The operator console's API: operators granted by the CLI, each action behind a recent MFA elevation"],
  ['guilds', 'Servers (the minimal model lobbies link to)'],
  ['roles', 'Server roles and permissions'],
  ['channels', 'Server channels'],
  ['messages', 'Channel messages: embeds, edits, deletions, typing, pins, reactions'],
  ['commands', "An application's commands, global and per server"],
  ['invites', 'Server invites'],
  ['gateway', 'Where the Gateway is (its protocol: /api/docs/gateway)'],
  ['remote-auth', 'QR login, the mobile side (the desktop side is the /remote-auth WebSocket)'],
  ['experiments', 'Experiment assignments'],
]

const description = `Discord-compatible REST API. Every route is served under \`/api/v9\`, \`/api/v10\` and \`/api\`
(documented once, under \`/api/v9\`). Errors are Discord's: \`{"code", "message", "errors"?}\` (form errors 50035 nest
by field). Rate-limited requests answer 429 with \`retry_after\`.

**Authorize**: a user token as it is, a bot token as \`Bot <token>\`, or an OAuth2 access token; on the token
endpoints, an application's client id and secret. The Gateway (WebSocket at \`/gateway\`) and the remote-auth
socket: [their protocol](/api/docs/gateway).

**Elevation**: a sensitive request (marked "elevated") may answer 401 60003 with \`mfa: {ticket, methods}\`; prove
one of the methods at \`POST /mfa/finish\` and repeat the request with the token it gives in
\`X-Discord-MFA-Authorization\` (or \`X-Service-MFA-Authorization\`). **Headers**: \`X-Fingerprint\` (registration,
login, \`GET /experiments\` before login), \`X-Request-Id\` (echoed, and in the access log).`

// The same handlers are mounted under /api/v10 and /api; document the v9 paths once.
const exclude = { paths: [/^\/api\/v10\//, /^\/api\/(?!v9\/)/, /^\/(?!api\/)/] }

type Schema = Record<string, unknown>
type MediaType = { schema?: Schema; example?: unknown }
type Parameter = { name: string; in: string; required?: boolean; schema?: Schema; description?: string }
type Operation = {
  requestBody?: { required?: boolean; description?: string; content?: Record<string, MediaType> }
  parameters?: Parameter[]
}

const PAYLOAD_JSON = {
  type: 'object',
  properties: {
    payload_json: {
      type: 'string',
      description: 'the JSON body, as in application/json (attached files are not stored)',
    },
  },
}

/** A body's content types as http/body.ts reads them: JSON; forms on the token endpoints; multipart on messages. */
function contents(path: string, schema: Schema): Record<string, MediaType> {
  // The first example of the body's schema is the example of each content type (Swagger UI's "Try it out" body).
  const example = (schema.examples as unknown[] | undefined)?.[0]
  const withExample = (media: MediaType, value = example): MediaType =>
    value === undefined ? media : { ...media, example: value }
  if (path.startsWith('/api/v9/oauth2/token')) {
    return { 'application/x-www-form-urlencoded': withExample({ schema }), 'application/json': withExample({ schema }) }
  }
  if (/^\/api\/v9\/(channels\/\{channelId\}|lobbies\/\{lobbyId\})\/messages$/.test(path)) {
    return {
      'application/json': withExample({ schema }),
      'multipart/form-data': withExample(
        { schema: PAYLOAD_JSON },
        example === undefined ? undefined : { payload_json: JSON.stringify(example) },
      ),
    }
  }
  return { 'application/json': withExample({ schema }) }
}

const SNOWFLAKE_PARAM = {
  type: 'string',
  pattern: '^\\d{1,20}$',
  description: 'snowflake (an id)',
  examples: ['1234567890123456789'],
}

/**
 * Path parameters as the routes read them (the generator types them all as bare strings), where a route does not
 * document its own (doc()'s `params`).
 */
const PATH_PARAMS: Record<string, Schema> = {
  code: { type: 'string', description: 'invite code', examples: ['aBcD1234'] },
}

/** A body schema the server may receive empty: documented as not required. */
function optionalBody(schema: unknown): boolean {
  return (
    typeof schema === 'object' && schema !== null && (schema as Record<symbol, unknown>)[OptionalKind] === 'Optional'
  )
}

/**
 * Schemas as OpenAPI 3.1 readers expect them, in place: a nullable scalar or object is one type list
 * (`type: ["object", "null"]`, as the generator writes the routes' own bodies; doc() schemas come as TypeBox wrote
 * them), and a union of literals that the generator turned into `type: "string"` with an `enum` gets its real type
 * when the literals are numbers (channel types).
 */
function tidy(schema: unknown): void {
  if (!schema || typeof schema !== 'object') return
  if (Array.isArray(schema)) return schema.forEach(tidy)
  const s = schema as Schema
  if (Array.isArray(s.enum) && s.type === 'string' && !s.enum.every((v) => typeof v === 'string')) {
    s.type = s.enum.every((v) => Number.isInteger(v))
      ? 'integer'
      : [...new Set(s.enum.map((v) => (v === null ? 'null' : typeof v)))]
  }
  for (const value of Object.values(s)) if (value && typeof value === 'object') tidy(value)
  const options = s.anyOf as Schema[] | undefined
  // A union of literals (doc() schemas): an enum, as the generator writes the routes' own.
  if (
    options?.length &&
    options.every((o) => 'const' in o && Object.keys(o).every((k) => k === 'const' || k === 'type'))
  ) {
    const values = options.map((o) => o.const)
    const types = [...new Set(values.map((v) => (Number.isInteger(v) ? 'integer' : v === null ? 'null' : typeof v)))]
    delete s.anyOf
    Object.assign(s, { type: types.length === 1 ? types[0] : types, enum: values })
    return
  }
  if (options?.length !== 2 || s.type !== undefined) return
  const other = options.find((o) => o.type !== 'null')
  const plainNull = options.find(
    (o) => o.type === 'null' && Object.keys(o).every((k) => k === 'type' || k === 'description'),
  )
  if (!other || !plainNull || typeof other.type !== 'string' || 'const' in other || other.anyOf) return
  delete s.anyOf
  delete s.nullable
  Object.assign(
    s,
    { ...other, ...s, type: [other.type, 'null'] },
    Array.isArray(other.enum) ? { enum: [...other.enum, null] } : {},
  )
}

/** What this module holds per App (core/app.ts). */
const newDocs = () => ({
  cached: undefined as { routes: number; document: unknown } | undefined,
})
declare module '../core/app' {
  interface AppState {
    docs: ReturnType<typeof newDocs>
  }
}
const docsHeld = appState('docs', newDocs)

/** The OpenAPI document of `app` (cached until routes are added). */
export function openApiDocument(root: AnyElysia): unknown {
  const st = docsHeld()
  // The generator reads these two (protected in Elysia's types).
  type Route = {
    method: string
    path: string
    hooks: { body?: unknown; detail?: DocumentDecoration } & Record<string, unknown>
  }
  const app = root as unknown as { getGlobalRoutes(): Route[]; getGlobalDefinitions?(): unknown }
  const routes = app.getGlobalRoutes()
  if (st.cached?.routes === routes.length) return st.cached.document
  const optional = new Set<string>()
  // The path parameters routes document themselves (doc()'s `params`), by operation.
  const pathParams = new Map<string, Record<string, Schema>>()
  const view = {
    getGlobalDefinitions: () => app.getGlobalDefinitions?.(),
    getGlobalRoutes: () =>
      routes.map((route) => {
        // A body documented with doc() (checked in the handler) is the one shown; without the app-wide parse hook
        // the generator lists a body under every content type, and the ones the server reads are kept below.
        const documented = route.hooks.detail?.requestBody !== undefined
        const operation = `${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, '{$1}')}`
        if (!documented && optionalBody(route.hooks.body)) optional.add(operation)
        const own = (route.hooks.detail?.parameters as Parameter[] | undefined)?.filter((p) => p.in === 'path')
        // Copied: tidy() below rewrites the document's schemas in place.
        if (own?.length)
          pathParams.set(operation, Object.fromEntries(own.map((p) => [p.name, structuredClone(p.schema!)])))
        return { ...route, hooks: { ...route.hooks, parse: undefined, ...(documented ? { body: undefined } : {}) } }
      }),
  } as unknown as AnyElysia
  const generated = toOpenAPISchema(view, exclude, undefined, undefined, '3.1.1') as {
    paths: Record<string, Record<string, Operation>>
    components: Record<string, unknown>
  }
  // A copy: the generator hands the routes' own schemas on, and the changes below must not reach the schemas that
  // check bodies (a compiled check reads its schema again to say what is wrong).
  const { paths, components } = structuredClone(generated)
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const own = pathParams.get(`${method} ${path}`)
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path') continue
        parameter.schema =
          own?.[parameter.name] ??
          (parameter.name.endsWith('Id') ? SNOWFLAKE_PARAM : (PATH_PARAMS[parameter.name] ?? parameter.schema))
      }
      const body = operation.requestBody
      if (!body?.content) continue
      const schema = Object.values(body.content).find((c) => c.schema)?.schema
      body.content = schema ? contents(path, schema) : {}
      if (optional.has(`${method} ${path}`)) body.required = false
    }
  }
  tidy(paths)
  const document = {
    openapi: '3.1.1',
    info: { title: 'Lobby server API', version: VERSION, description },
    tags: TAGS.map(([name, text]) => ({ name, description: text })),
    paths,
    components: { ...components, securitySchemes },
  }
  st.cached = { routes: routes.length, document }
  return document
}

/** The docs routes of the app `root` returns (read when the document is first asked for). */
export function docs(root: () => AnyElysia) {
  return new Elysia({ name: 'docs' })
    .get('/api/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), {
      detail: { hide: true },
    })
    .get('/api/docs/json', () => openApiDocument(root()), { detail: { hide: true } })
    .get(
      '/api/docs/swagger-ui.css',
      () => new Response(Bun.file(swaggerCss), { headers: { 'content-type': 'text/css' } }),
      { detail: { hide: true } },
    )
    .get(
      '/api/docs/swagger-ui-bundle.js',
      () => new Response(Bun.file(swaggerJs), { headers: { 'content-type': 'text/javascript' } }),
      { detail: { hide: true } },
    )
}
/**
 * An integer in an answer. Elysia's `t.Integer` also takes numeric strings (right for input, where it coerces), so
 * the document would say an answer's integer may be a string; answers use TypeBox's own.
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options)

const FieldErrors = Type.Record(
  Type.String(),
  Type.Unknown({ description: 'a nested field, or `_errors`: [{code, message}]' }),
  { description: 'form errors (50035) by field: `errors.<field>._errors[{code, message}]`, lists by index' },
)

/** Discord's error body, as every 4xx of this API answers it. */
export const ErrorBody = t.Object(
  {
    code: Int({ description: 'Discord JSON error code (0 for plain HTTP errors)' }),
    message: t.String(),
    errors: t.Optional(FieldErrors),
    retry_after: t.Optional(t.Number({ description: '429 only: seconds to wait' })),
    global: t.Optional(t.Boolean({ description: '429 only' })),
    mfa: t.Optional(
      t.Object(
        {
          ticket: t.String({ description: 'for POST /mfa/finish' }),
          methods: t.Array(
            t.Object({
              type: t.String({ description: "a second factor's type, or password (accounts without MFA)" }),
              challenge: t.Optional(t.String({ description: 'webauthn: the assertion options (JSON)' })),
              backup_codes_allowed: t.Optional(t.Boolean({ description: 'totp: whether a backup code may stand in' })),
            }),
            { description: 'the factors the user can prove' },
          ),
        },
        { description: '60003 only: elevation is required' },
      ),
    ),
    error: t.Optional(
      t.String({ description: "OAuth2 authorize requests: RFC 6749's error name beside the form error" }),
    ),
    error_description: t.Optional(t.String({ description: 'OAuth2 authorize requests' })),
  },
  { description: 'Error' },
)

/** What a route answers with a status: a schema (JSON body) or just a description (e.g. 204). */
export type Answer = TSchema | string

/**
 * A route's OpenAPI entry: its tag, summary and answers, plus Discord's error body for 4xx. Documentation only:
 * nothing checks an answer against these schemas at run time, so a good answer can never be turned into an error
 * and hot paths pay nothing for them. `body` documents the request body where the handler checks it itself (a hot
 * endpoint's bodyCheck, the login body): it is shown instead of the route's, with its `examples[0]` as the example.
 * `query` documents a query the handler reads itself; `params` path parameters (by name) the handler judges itself.
 * `error` replaces Discord's error body where a protocol has its own (OAuth2's token endpoints); `security` names
 * credentials a route reads without the `auth` macro (which sets it for the others). Content types are
 * http/body.ts's (openApiDocument).
 */
export function doc(
  tag: string,
  summary: string,
  answers: Record<number, Answer>,
  {
    body,
    query,
    params,
    error = ErrorBody,
    security,
  }: {
    body?: TSchema
    query?: TObject
    params?: Record<string, TSchema | undefined>
    error?: TSchema
    security?: Record<string, string[]>[]
  } = {},
) {
  const responses: Record<string, { description: string; content?: Record<string, { schema: TSchema }> }> = {}
  for (const [status, answer] of Object.entries(answers)) {
    responses[status] =
      typeof answer === 'string'
        ? { description: answer }
        : { description: answer.description ?? 'OK', content: { 'application/json': { schema: answer } } }
  }
  responses['4XX'] = { description: error.description ?? 'Error', content: { 'application/json': { schema: error } } }
  const detail: DocumentDecoration = { tags: [tag], summary, responses, ...(security ? { security } : {}) }
  if (body) detail.requestBody = { required: !optionalBody(body), content: { 'application/json': { schema: body } } }
  const parameters = [
    ...Object.entries(params ?? {}).flatMap(([name, schema]) =>
      schema ? [{ name, in: 'path', required: true, schema }] : [],
    ),
    ...Object.entries(query?.properties ?? {}).map(([name, schema]) => ({
      name,
      in: 'query',
      required: false,
      schema: schema as TSchema,
    })),
  ]
  if (parameters.length) detail.parameters = parameters
  return { detail }
}

export const NO_CONTENT: Answer = 'No content'
