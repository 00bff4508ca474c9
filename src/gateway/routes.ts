// REST: where the Gateway is. Clients append their own query (?v=10&encoding=json).
import { Elysia, t } from 'elysia'
import { doc, Int } from '../http/docs'
import { identity } from '../http/identity'
import { gatewayUrl } from './connection'

const GatewayAnswer = t.Object({ url: t.String() }, { description: 'The Gateway URL' })
const GatewayBotAnswer = t.Object(
  {
    url: t.String(),
    shards: Int(),
    session_start_limit: t.Object({ total: Int(), remaining: Int(), reset_after: Int(), max_concurrency: Int() }),
  },
  { description: 'The Gateway URL and sharding' },
)

export const gatewayRoutes = new Elysia()
  .use(identity)
  .get('/gateway', () => ({ url: gatewayUrl() }), doc('gateway', 'Gateway URL', { 200: GatewayAnswer }))
  .get(
    '/gateway/bot',
    () => ({
      url: gatewayUrl(),
      shards: 1,
      session_start_limit: { total: 1000, remaining: 1000, reset_after: 86_400_000, max_concurrency: 1 },
    }),
    { auth: 'bot', ...doc('gateway', 'Gateway URL and sharding for bots', { 200: GatewayBotAnswer }) },
  )
