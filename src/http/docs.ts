// OpenAPI document of every route at /api/docs/json (built from the routes' own schemas, so it stays true),
// and a Swagger UI page at /api/docs whose script and styles are embedded: it works offline.
import { openapi } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
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
