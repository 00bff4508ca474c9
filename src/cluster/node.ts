// What a node of a cluster (REDIS_URL, with the data on PostgreSQL) shares with the others through Redis, put in place
// at start and taken back at stop. Loaded with import() in cluster mode only. So far: the security limits
// (core/ratelimit.ts counts every attempt in Redis, so N nodes allow what one does) and the Gateway's log (its
// dispatches and session calls reach every node's sockets: gateway.ts). Leases and cache invalidations (leases.ts,
// log.ts) join here as they are wired.
import { useSharedLimits } from '../core/ratelimit'
import { type ClusterGateway, startClusterGateway } from './gateway'
import type { LogOptions } from './log'
import { redisRateLimits } from './ratelimit'
import { openRedis } from './redis'

export type ClusterNode = { gateway: ClusterGateway; stop(): Promise<void> }

/** Connect to Redis (fails when it does not answer) and share what the node shares; `stop()` undoes it. */
export async function startClusterNode(redisUrl: string, logOptions: LogOptions = {}): Promise<ClusterNode> {
  const redis = openRedis(redisUrl, 'lobby-server')
  try {
    await redis.ping()
  } catch (error) {
    redis.disconnect()
    throw error
  }
  useSharedLimits(redisRateLimits(redis))
  const gateway = await startClusterGateway(redisUrl, redis, logOptions)
  return {
    gateway,
    async stop() {
      await gateway.stop()
      useSharedLimits(undefined)
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
