// Work addressed to one node of a cluster. Some state lives in one process and cannot be shared: a voice call's peer
// connections and UDP sockets, a remote-auth desktop's socket. With several nodes a domain places such a thing on one
// node (a key every node can read says which), and a request that lands on another node is sent there as a message
// (cluster/routing.ts: a stream per node, read only by that node). One server installs nothing: every place is here.
import { appState } from '../core/app'
import { log } from '../core/log'

export type NodeRouting = {
  /** This node's name (what `place` and `holder` answer for it). */
  readonly self: string
  /** The live node that holds `key`; this node takes it (for `ttlMs`) when no live node does. */
  place(key: string, ttlMs: number): Promise<string>
  /** The live node that holds `key`, or undefined. */
  holder(key: string): Promise<string | undefined>
  /** Hold `key` `ttlMs` more if this node holds it (the holder renews what it keeps); false otherwise. */
  keep(key: string, ttlMs: number): Promise<boolean>
  /** Give `key` up if this node holds it. */
  release(key: string): Promise<void>
  /** Run `kind`'s handler on `node` with `message` (JSON). What one node sends to another arrives in that order. */
  send(node: string, kind: string, message: unknown): Promise<void>
  /** A small map every node reads and writes (field → text), kept `ttlMs` after its last change. */
  fields(key: string): Promise<Record<string, string>>
  setField(key: string, field: string, value: string | null, ttlMs: number): Promise<void>
  dropFields(key: string): Promise<void>
  /**
   * Hold `field` of the set `key` for this node, unless `max` other fields are held by live nodes already (false
   * then): a limit counted over the cluster (a user's calls), where a dead node's fields no longer count.
   */
  claim(key: string, field: string, max: number, ttlMs: number): Promise<boolean>
  /** Give `field` of `key` up if this node holds it. */
  unclaim(key: string, field: string): Promise<void>
}

/** What this module holds per App (core/app.ts). */
const newGatewayNodes = () => ({
  routing: undefined as NodeRouting | undefined,
  handlers: new Map<string, NodeMessageHandler>(),
  orphans: new Map<string, OrphanHandler>(),
})
declare module '../core/app' {
  interface AppState {
    gatewayNodes: ReturnType<typeof newGatewayNodes>
  }
}
const nodesHeld = appState('gatewayNodes', newGatewayNodes)

/** Several nodes: the cluster side installs its routing at start (undefined at stop). */
export function useNodeRouting(next: NodeRouting | undefined): void {
  nodesHeld().routing = next
}

/** The cluster's routing, or undefined on one server. */
export function nodeRouting(): NodeRouting | undefined {
  return nodesHeld().routing
}

export type NodeMessageHandler = (message: any) => void | Promise<void>

/** What a domain does with a place whose node died (no live node holds it now): what the node held there is gone. */
export type OrphanHandler = (key: string) => void | Promise<void>

/** A domain cleans up after the places it names with `prefix` (voice:room:, remote-auth:) when their node dies. */
export function onOrphanedPlace(prefix: string, handler: OrphanHandler): void {
  nodesHeld().orphans.set(prefix, handler)
}

/** The dead-node clean-up (cluster/cleanup.ts) hands over a place its node held: its domain's handler runs. */
export async function orphanedPlace(key: string): Promise<void> {
  for (const [prefix, handler] of nodesHeld().orphans)
    if (key.startsWith(prefix)) {
      try {
        await handler(key)
      } catch (error) {
        log.error('dead-node clean-up of a place failed', { key, error: String(error) })
      }
      return
    }
}

/** A domain handles the messages of a kind sent to this node by the others. */
export function onNodeMessage(kind: string, handler: NodeMessageHandler): void {
  nodesHeld().handlers.set(kind, handler)
}

/**
 * A message for this node: the cluster side calls it for each, in order, without waiting for the one before (a handler
 * whose work awaits queues it at once where order matters). A failure is logged.
 */
export async function receiveNodeMessage(kind: string, message: unknown): Promise<void> {
  const handler = nodesHeld().handlers.get(kind)
  if (!handler) return log.warn('node message of an unknown kind dropped', { kind })
  try {
    await handler(message)
  } catch (error) {
    log.error('node message failed', { kind, error: String(error) })
  }
}
