// The dead-node clean-up (SCALE-OUT.md §4): what a node held that outlives it in the shared stores is ended by another
// node, one node at a time (core/turns.ts). Every node lists itself at start (`cluster:nodes`); a listed node whose
// node-id lease is gone (killed, or stopped) is marked dead when first seen so; then:
// - at once, the places it held (routing.ts: voice calls, remote-auth desktops) and no live node took since are handed
//   to their domains (gateway/nodes.ts orphanedPlace): the call's members are disconnected (the lobby hears them
//   leave), the desktop's row deleted — their media and sockets died with it, nothing resumes them elsewhere;
// - once the Gateway's resume window has passed, its sessions that no node resumed end for good: the domains' session
//   end hooks run here (idle countdowns of the lobbies nobody keeps active, the session's calls on other nodes); its
//   presence counts went already (gateway.ts drops a dead node's share at once).
// Then the node's lists are deleted and it is listed no more.
import { config } from '../config'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { myTurn } from '../core/turns'
import { endOrphanedSession } from '../gateway/dispatch'
import { orphanedPlace } from '../gateway/nodes'
import type { Caller } from '../core/caller'
import type { Redis } from './redis'
import { RELEASE } from './leases'
import { ownedKey } from './routing'
import { nodeSessionsKey, recordOf, sessionKey } from './sessions'

export const NODES_KEY = 'cluster:nodes'
const deadSinceKey = (node: string) => `cluster:dead-since:${node}`
const EVERY_MS = 5000

/** List this node (at start) and look for dead ones every few seconds when it is this node's turn; returns the stop. */
export function startDeadNodeCleanup(
  redis: Redis,
  self: string,
  isLive: (node: string) => Promise<boolean>,
  holderOf: (key: string) => Promise<string | undefined>,
): { ready: Promise<unknown>; stop(): void } {
  const ready = redis.sadd(NODES_KEY, self)
  let running = false
  const timer = setInterval(async () => {
    if (running) return
    running = true
    try {
      if (await myTurn('dead-nodes', EVERY_MS)) await cleanUp(redis, self, isLive, holderOf)
    } catch (error) {
      log.warn('dead-node clean-up failed; tried again', { error: String(error) })
    } finally {
      running = false
    }
  }, EVERY_MS)
  timer.unref?.()
  return { ready, stop: () => clearInterval(timer) }
}

async function cleanUp(
  redis: Redis,
  self: string,
  isLive: (node: string) => Promise<boolean>,
  holderOf: (key: string) => Promise<string | undefined>,
): Promise<void> {
  const windowMs = config().gatewayResumeWindowMs
  for (const node of await redis.smembers(NODES_KEY)) {
    if (node === self || (await isLive(node))) continue
    await redis.set(deadSinceKey(node), clock.now(), 'NX')
    // Its places at once: a call's media and a desktop's socket died with it, and nothing resumes them elsewhere.
    for (const key of await redis.hkeys(ownedKey(node))) {
      const holder = await holderOf(key)
      if (holder === undefined || holder === node) {
        await orphanedPlace(key)
        await RELEASE(redis, [key], [node])
      } // else taken by a live node since
      await redis.hdel(ownedKey(node), key)
    }
    const since = Number(await redis.get(deadSinceKey(node)))
    if (clock.now() - since < windowMs) continue
    await endSessionsOf(redis, node)
    await redis.multi().del(nodeSessionsKey(node), ownedKey(node), deadSinceKey(node)).srem(NODES_KEY, node).exec()
    log.info('dead-node clean-up: a node’s leftovers ended', { node })
  }
}

/** The dead node's sessions that no node holds now (none resumed them, or its record expired). */
async function endSessionsOf(redis: Redis, node: string): Promise<void> {
  const sessions = await redis.hgetall(nodeSessionsKey(node))
  for (const [sessionId, callerJson] of Object.entries(sessions)) {
    const saved = await redis.get(sessionKey(sessionId))
    const record = saved === null ? undefined : recordOf(saved)
    if (record?.node !== undefined && record.node !== node) continue // resumed on another node: it lives on there
    let caller: Caller
    try {
      caller = JSON.parse(callerJson) as Caller
    } catch {
      continue
    }
    endOrphanedSession(sessionId, caller)
  }
}
