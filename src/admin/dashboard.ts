// The console's dashboard: the server's numbers, read when asked (the same sources as /metrics): users, this node's
// Gateway sockets and sessions, lobbies, lobby messages per minute over the last hour (all nodes: read from the
// database), the event webhooks' queue, and which node answered, on which database, running which version.
import { countUsers } from '../accounts/store'
import { config } from '../config'
import { clock } from '../core/clock'
import { nodeRouting } from '../gateway/nodes'
import { gatewayStats } from '../gateway/server'
import { lobbyMessagesPerMinute } from '../lobbies/console-store'
import { countEventDeliveries } from '../lobbies/event-deliveries-store'
import { countLobbies } from '../lobbies/store'
import { buildInfo } from '../version'

const HOUR = 60 * 60_000
const startedAt = Date.now()

export async function dashboard() {
  const now = clock.now()
  const thisMinute = Math.floor(now / 60_000) * 60_000
  const first = thisMinute - HOUR + 60_000
  const counted = new Map(await lobbyMessagesPerMinute(first))
  // 60 points, oldest first, the current (partial) minute last; a minute without messages is 0.
  const perMinute = Array.from({ length: 60 }, (_, i) => counted.get(first + i * 60_000) ?? 0)
  const gateway = gatewayStats()
  const cfg = config()
  return {
    users: await countUsers(),
    gateway_connections: gateway.connections,
    gateway_sessions: gateway.sessions,
    lobbies: await countLobbies(),
    messages_last_minute: perMinute[58] ?? 0,
    messages_per_minute: perMinute,
    event_deliveries_queued: await countEventDeliveries(),
    node: {
      name: nodeRouting()?.self ?? null,
      clustered: !!cfg.redisUrl,
      database: cfg.databaseUrl ? 'postgresql' : 'sqlite',
      version: buildInfo().version,
      uptime_seconds: Math.round((Date.now() - startedAt) / 1000),
    },
  }
}
