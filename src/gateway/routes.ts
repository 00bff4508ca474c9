// REST: where the Gateway is. Clients append their own query (?v=10&encoding=json).
import { Elysia } from 'elysia'
import { identity } from '../http/identity'
import { gatewayUrl } from './server'

export const gatewayRoutes = new Elysia()
  .use(identity)
  .get('/gateway', () => ({ url: gatewayUrl() }), { detail: { tags: ['gateway'], summary: 'Gateway URL' } })
  .get(
    '/gateway/bot',
    () => ({
      url: gatewayUrl(),
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    }),
    { auth: 'bot', detail: { tags: ['gateway'], summary: 'Gateway URL and sharding for bots' } },
  )
