// OpenAPI document of every route at /api/docs/json (built from the routes' own schemas, so it stays true),
// and a Swagger UI page at /api/docs whose script and styles are embedded: it works offline.
import { openapi } from '@elysiajs/openapi'
import type { TObject } from '@sinclair/typebox'
import { Elysia, t, type DocumentDecoration, type TSchema } from 'elysia'
import swaggerCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import swaggerJs from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>API reference</title><link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/docs/json', dom_id: '#swagger-ui' })</script>
</body></html>`

export const docs = new Elysia({ name: 'docs' })
  .use(
    openapi({
      path: '/api/docs/scalar',
      specPath: '/api/docs/json',
      provider: null,
      // The same handlers are mounted under /api/v10 and /api; document the v9 paths once.
      exclude: { paths: [/^\/api\/v10\//, /^\/api\/(?!v9\/|docs)/, '/healthz'] },
      documentation: { info: { title: 'Lobby server API', version: '9' } },
    }),
  )
  .get('/api/docs', () => new Response(page, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { detail: { hide: true } })
  .get('/api/docs/swagger-ui.css', () => new Response(Bun.file(swaggerCss), { headers: { 'content-type': 'text/css' } }), { detail: { hide: true } })
  .get('/api/docs/swagger-ui-bundle.js', () => new Response(Bun.file(swaggerJs), { headers: { 'content-type': 'text/javascript' } }), { detail: { hide: true } })

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
