// Connections to the cluster's Redis (REDIS_URL) through ioredis, and its Lua scripts. Not Bun's own client
// (Bun.RedisClient, Bun 1.4.5): a subscriber hears nothing after Redis restarts, and a command can stay pending forever
// after a reconnect (tried; SCALE-OUT.md §2, beside the repository). Nothing outside src/cluster/ imports this folder
// statically, so the single binary never loads ioredis (scripts/check-structure.ts, tests/db/pg-apart.test.ts).
import { createHash } from 'node:crypto'
import { Redis } from 'ioredis'

export type { Redis }

/**
 * How long a command on a node's connection may wait for its answer. A Redis that hangs, or a path to it that drops
 * packets, keeps the connection open, and ioredis would wait forever (nothing is failed until the socket closes): the
 * command fails instead, and its caller decides as it does when Redis is away. Every command on this connection is a
 * short script or a single key's; 2 s is far beyond a healthy answer (~0.1 ms) and an AOF rewrite's fork pause.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 2000

/**
 * A connection for ordinary commands. It reconnects quickly after a Redis restart (50 ms more per attempt, at most
 * 1 s apart), and a command issued while Redis is away fails after three reconnect attempts (~0.3 s), not twenty, or
 * after REDIS_COMMAND_TIMEOUT_MS when Redis does not answer: its caller (a rate limit in a request, the outbox relay)
 * decides what to do. A command that timed out may still run when Redis wakes up. A command cut off by a lost
 * connection is sent again after the reconnect, so what this folder writes is safe to run twice: an append is
 * deduplicated by its event id, an attempt is one sorted-set member, a lease taken again by its owner just lapses.
 */
export function openRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    maxRetriesPerRequest: 3,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
  })
}

/**
 * A connection of its own for one blocking reader (XREAD BLOCK). A blocking command interrupted by a lost connection
 * is failed at once (no retry per request) and never sent again after the reconnect: resent, it may never settle
 * (bullmq#4479, ioredis#1285). The reader retries by itself and replaces a connection that stays silent (log.ts).
 */
export function openBlockingRedis(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    retryStrategy: (attempt) => Math.min(50 * attempt, 1000),
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
  })
}

/** A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL the first time a server does not know it. */
export function luaScript(source: string) {
  const sha = createHash('sha1').update(source).digest('hex')
  const run = async (redis: Redis, keys: string[], args: (string | number)[]): Promise<unknown> => {
    try {
      return await redis.evalsha(sha, keys.length, ...keys, ...args)
    } catch (error) {
      if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error
      return redis.eval(source, keys.length, ...keys, ...args)
    }
  }
  return Object.assign(run, { source })
}
