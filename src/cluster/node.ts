// What a node of a cluster (REDIS_URL, with the data on PostgreSQL) shares with the others through Redis, put in place
// at start and taken back at stop. Loaded with import() in cluster mode only. So far: the security limits
// (core/ratelimit.ts counts every attempt in Redis, so N nodes allow what one does) and the Gateway's log (its
// dispatches and session calls reach every node's sockets, sessions resume on any node: gateway.ts, sessions.ts), and
// a node id leased for snowflakes (leases.ts: no two machines mint the same id), work addressed to one node
// (routing.ts: voice calls and remote-auth desktops live on one node each), and whose turn it is to run the periodic
// clean-ups (turns.ts: one node at a time), and the leftovers of a node that died (cleanup.ts).
import { randomUUID } from 'node:crypto'
import { config } from '../config'
import { log } from '../core/log'
import { useSharedLimits } from '../core/ratelimit'
import { useNodeId } from '../core/snowflake'
import { type ClusterGateway, startClusterGateway } from './gateway'
import { leaseNodeId, nodeIdKey } from './leases'
import type { LogOptions } from './log'
import { redisRateLimits } from './ratelimit'
import { shareTurns } from './turns'
import { openRedis } from './redis'
import { startNodeMail } from './routing'
import { startDeadNodeCleanup } from './cleanup'
import { useNodeRouting } from '../gateway/nodes'

export type ClusterNode = { nodeId: number; gateway: ClusterGateway; stop(): Promise<void> }

/**
 * A node whose id lease ran out (Redis away longer than the lease, or another node took the id) must not mint another
 * id: by default it shuts down (SIGTERM to itself: its sockets resume on the other nodes).
 */
function leaveCluster(): void {
  log.error('cluster: this node lost its node id (Redis away or the id taken): shutting down so no id is minted twice')
  process.kill(process.pid, 'SIGTERM')
}

/** Connect to Redis (fails when it does not answer) and share what the node shares; `stop()` undoes it. */
export async function startClusterNode(
  redisUrl: string,
  { log: logOptions = {}, onNodeIdLost = leaveCluster }: { log?: LogOptions; onNodeIdLost?: () => void } = {},
): Promise<ClusterNode> {
  const redis = openRedis(redisUrl, 'lobby-server')
  try {
    await redis.ping()
  } catch (error) {
    redis.disconnect()
    throw error
  }
  const owner = randomUUID()
  const nodeId = await leaseNodeId(redis, owner, {
    ttlMs: config().nodeLeaseMs,
    renewMs: Math.floor(config().nodeLeaseMs / 4),
    onLost: () => {
      useNodeId(undefined)
      onNodeIdLost()
    },
  })
  useNodeId(nodeId.id)
  useSharedLimits(redisRateLimits(redis))
  const node = `${nodeId.id}:${owner}`
  const stopTurns = shareTurns(redis, owner)
  // A node lives while its node id's lease holds its owner.
  const isLive = async (node: string) => {
    const [id, holder] = node.split(':')
    return (await redis.get(nodeIdKey(Number(id)))) === holder
  }
  const gateway = await startClusterGateway(redisUrl, redis, { ...logOptions, node, isLive })
  // What one node holds (a voice call, a remote-auth desktop) is reached from the others through it.
  const mail = startNodeMail(redisUrl, redis, node)
  useNodeRouting(mail)
  const cleanup = startDeadNodeCleanup(redis, node, isLive, (key) => mail.holder(key))
  await cleanup.ready
  return {
    nodeId: nodeId.id,
    gateway,
    async stop() {
      cleanup.stop()
      useNodeRouting(undefined)
      await mail.stop()
      await gateway.stop()
      stopTurns()
      useSharedLimits(undefined)
      useNodeId(undefined)
      await nodeId.release().catch(() => {})
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
