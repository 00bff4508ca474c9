// OpenAPI document of every route at /api/docs/json, built from the routes' own schemas (so it stays true) by
// @elysiajs/openapi's generator, then completed here: request bodies under the content types the server accepts (the
// generator leaves them empty because of the app-wide body parser), the security schemes (user token, `Bot` token,
// OAuth2 `Bearer`) that the `auth` macro names per route (http/identity.ts), tag descriptions, and the bodies of the
// two routes that read theirs by hand. A Swagger UI page at /api/docs (script and styles embedded: it works
// offline) with a working Authorize button. The Gateway's reference (/api/docs/gateway) is gateway/docs.ts.
import { toOpenAPISchema } from '@elysiajs/openapi'
import type { TObject } from '@sinclair/typebox'
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
export const SECURITY = { user: 'UserToken', bot: 'BotToken', bearer: 'OAuth2Bearer' } as const

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
}

const TAGS: [name: string, description: string][] = [
  ['auth', 'Registration, login, sessions, e-mail verification, password reset and account recovery'],
  ['mfa', 'Second factors (authenticator app, backup codes, SMS, security keys and passkeys) and elevation (60003)'],
  ['users', 'The current user, its settings and its servers'],
  ['usernames', 'Username rules, availability and suggestions'],
  ['oauth2', 'Applications, authorization codes with PKCE, tokens'],
  ['lobbies', 'Lobbies: members, metadata, secrets, messages, channel links'],
  ['guilds', 'Servers (the minimal model lobbies link to)'],
  ['roles', 'Server roles and permissions'],
  ['channels', 'Server channels'],
  ['messages', 'Channel messages'],
  ['invites', 'Server invites'],
  ['gateway', 'Where the Gateway is (its protocol: /api/docs/gateway)'],
  ['remote-auth', 'QR login, the mobile side (the desktop side is the /remote-auth WebSocket)'],
  ['experiments', 'Experiment assignments'],
]

const description = `Discord-compatible REST API. Every route is served under \`/api/v9\`, \`/api/v10\` and \`/api\`
(documented once, under \`/api/v9\`). Errors are Discord's: \`{"code", "message", "errors"?}\` (form errors 50035 nest
by field). Rate-limited requests answer 429 with \`retry_after\`.

**Authorize**: a user token as it is, a bot token as \`Bot <token>\`, or an OAuth2 access token. The Gateway
(WebSocket at \`/gateway\`): [its protocol](/api/docs/gateway).`

// The two routes that read their bodies by hand (a logged-in client may send none; OAuth2's form fields): their
// documentation only.
const handRead = {
  '/api/v9/auth/login': {
    post: {
      body: t.Object({
        login: t.String({ description: 'e-mail address or phone number (E.164)', examples: ['someone@example.com'] }),
        password: t.String({ examples: ['correct horse battery staple'] }),
        undelete: t.Optional(t.Boolean({ description: 'restore an account scheduled for deletion or disabled' })),
        login_source: t.Optional(t.Union([t.String(), t.Null()])),
        gift_code_sku_id: t.Optional(t.Union([t.String(), t.Null()])),
      }),
    },
  },
  '/api/v9/oauth2/token': {
    post: {
      body: t.Object({
        grant_type: t.Union([t.Literal('authorization_code'), t.Literal('refresh_token'), t.Literal('client_credentials')]),
        code: t.Optional(t.String({ description: 'authorization_code: the code from the redirect' })),
        redirect_uri: t.Optional(t.String({ description: 'authorization_code: the redirect_uri of the authorization request' })),
        code_verifier: t.Optional(t.String({ description: 'authorization_code with PKCE' })),
        refresh_token: t.Optional(t.String({ description: 'refresh_token: the refresh token' })),
        scope: t.Optional(t.String({ description: 'space-separated scopes (client_credentials; narrower ones on refresh)' })),
        client_id: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
        client_secret: t.Optional(t.String({ description: 'or HTTP Basic authentication' })),
      }),
    },
  },
}

// The same handlers are mounted under /api/v10 and /api; document the v9 paths once.
const exclude = { paths: [/^\/api\/v10\//, /^\/api\/(?!v9\/)/, /^\/(?!api\/)/] }

type Operation = { requestBody?: { content?: Record<string, unknown> } }

const PAYLOAD_JSON = {
  type: 'object',
  properties: { payload_json: { type: 'string', description: 'the JSON body, as in application/json (attached files are not stored)' } },
}

/** A body's content types as http/body.ts reads them: JSON; forms on the token endpoints; multipart on messages. */
function contents(path: string, schema: unknown): Record<string, { schema: unknown }> {
  if (path.startsWith('/api/v9/oauth2/token')) return { 'application/x-www-form-urlencoded': { schema }, 'application/json': { schema } }
  if (/^\/api\/v9\/(channels\/\{channelId\}|lobbies\/\{lobbyId\})\/messages$/.test(path)) {
    return { 'application/json': { schema }, 'multipart/form-data': { schema: PAYLOAD_JSON } }
  }
  return { 'application/json': { schema } }
}

let cached: { routes: number; document: unknown } | undefined

/** The OpenAPI document of `app` (cached until routes are added). */
export function openApiDocument(root: AnyElysia): unknown {
  // The generator reads these two (protected in Elysia's types).
  const app = root as unknown as { getGlobalRoutes(): { hooks: Record<string, unknown> }[]; getGlobalDefinitions?(): unknown }
  const routes = app.getGlobalRoutes()
  if (cached?.routes === routes.length) return cached.document
  // Without the app-wide parse hook the generator lists a body's schema under its content types; kept below are the
  // ones the server reads.
  const view = {
    getGlobalDefinitions: () => app.getGlobalDefinitions?.(),
    getGlobalRoutes: () => routes.map((route) => ({ ...route, hooks: { ...route.hooks, parse: undefined } })),
  } as unknown as AnyElysia
  const { paths, components } = toOpenAPISchema(view, exclude, [handRead as never], undefined, '3.1.1') as {
    paths: Record<string, Record<string, Operation>>
    components: Record<string, unknown>
  }
  for (const [path, operations] of Object.entries(paths)) {
    for (const operation of Object.values(operations)) {
      const content = operation.requestBody?.content
      if (!content) continue
      const schema = Object.values(content).find((c) => (c as { schema?: unknown }).schema) as { schema: unknown } | undefined
      operation.requestBody!.content = schema ? contents(path, schema.schema) : {}
    }
  }
  const document = {
    openapi: '3.1.1',
    info: { title: 'Lobby server API', version: VERSION, description },
    tags: TAGS.map(([name, text]) => ({ name, description: text })),
    paths,
    components: { ...components, securitySchemes },
  }
  cached = { routes: routes.length, document }
  return document
}

/** The docs routes of the app `root` returns (read when the document is first asked for). */
export function docs(root: () => AnyElysia) {
  return new Elysia({ name: 'docs' })
    .get('/api/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
    .get('/api/docs/json', () => openApiDocument(root()), { detail: { hide: true } })
    .get('/api/docs/swagger-ui.css', () => new Response(Bun.file(swaggerCss), { headers: { 'content-type': 'text/css' } }), { detail: { hide: true } })
    .get('/api/docs/swagger-ui-bundle.js', () => new Response(Bun.file(swaggerJs), { headers: { 'content-type': 'text/javascript' } }), { detail: { hide: true } })
}
/** Discord's error body, as every 4xx of this API answers it. */
const ErrorBody = t.Object(
  {
    code: t.Integer({ description: 'Discord JSON error code (0 for plain HTTP errors)' }),
    message: t.String(),
    errors: t.Optional(t.Unknown({ description: 'form errors by field: errors.<field>._errors[{code, message}]' })),
    retry_after: t.Optional(t.Number({ description: '429 only: seconds to wait' })),
    global: t.Optional(t.Boolean({ description: '429 only' })),
  },
  { description: 'Error' },
)

/** What a route answers with a status: a schema (JSON body) or just a description (e.g. 204). */
export type Answer = TSchema | string

/**
 * A route's OpenAPI entry: its tag, summary and answers, plus Discord's error body for 4xx. Documentation only:
 * nothing checks an answer against these schemas at run time, so a good answer can never be turned into an error
 * and hot paths pay nothing for them. `body` and `query` document what a handler checks itself; `error` replaces
 * Discord's error body where a protocol has its own (OAuth2's token endpoints).
 */
export function doc(
  tag: string,
  summary: string,
  answers: Record<number, Answer>,
  { body, query, error = ErrorBody, bodyType = 'application/json' }: { body?: TSchema; query?: TObject; error?: TSchema; bodyType?: string } = {},
) {
  const responses: Record<string, { description: string; content?: Record<string, { schema: TSchema }> }> = {}
  for (const [status, answer] of Object.entries(answers)) {
    responses[status] =
      typeof answer === 'string'
        ? { description: answer }
        : { description: answer.description ?? 'OK', content: { 'application/json': { schema: answer } } }
  }
  responses['4XX'] = { description: error.description ?? 'Error', content: { 'application/json': { schema: error } } }
  const detail: DocumentDecoration = { tags: [tag], summary, responses }
  if (body) detail.requestBody = { content: { [bodyType]: { schema: body } } }
  if (query) detail.parameters = Object.entries(query.properties).map(([name, schema]) => ({ name, in: 'query', required: false, schema: schema as TSchema }))
  return { detail }
}

export const NO_CONTENT: Answer = 'No content'
