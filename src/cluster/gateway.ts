// The Gateway of a node in a cluster: the bus's dispatches and session calls go to the log (log.ts) instead of this
// process's sockets, and every entry of the log, whichever node appended it, comes back to every node in sequence
// order and is applied to that node's own sessions (gateway/dispatch.ts applyLogged). So a lobby message posted through
// one node reaches the members' sockets on all of them with one `s`, and a logout on one node closes the sockets of
// that session wherever they are; a session is kept in Redis for a Resume on any node (sessions.ts); who is online
// (gateway/presence.ts) is each node's count, told to the others. What the bus is given inside a transaction goes
// through the outbox (outbox.ts): written in that transaction, relayed after its COMMIT.
import { config } from '../config'
import { forgetCallersHere, shareForgetCallers } from '../core/caller'
import { invalidateHere, shareInvalidations } from '../db/cache'
import { log } from '../core/log'
import { applyPresence, dropPresenceOf, presenceNodes, usePresence } from '../gateway/presence'
import { applyLogged, useGatewayLog } from '../gateway/dispatch'
import { advanceSeq, currentSeq } from '../gateway/replay'
import { type Consumer, type Draft, GatewayLog, isGatewayEntry, type LogOptions, startConsumer } from './log'
import { startOutbox } from './outbox'
import type { Redis } from './redis'
import { sessionRegistry } from './sessions'

/** How often a node looks whether the nodes it counts sessions of still live. */
const PRESENCE_CHECK_MS = 5000
/** How long `caughtUp` waits for the relay and the log (Redis away: it answers false). */
const CATCH_UP_MS = 3000

/** The promise's value, or undefined if it takes longer than `ms` (its timer cleared: it holds no stopping node). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: Timer | undefined
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, Math.max(ms, 0), undefined)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

export type ClusterGateway = { log: GatewayLog; consumer: Consumer; stop(): Promise<void> }

/** Read the log from its current end and send the bus through it; `stop()` gives the bus back to this process. */
export async function startClusterGateway(
  url: string,
  redis: Redis,
  {
    node,
    isLive,
    ...options
  }: LogOptions & {
    /** This node in presence entries (its node id and the lease's owner). */
    node: string
    /** Whether a node named in presence entries still holds its lease. */
    isLive: (node: string) => Promise<boolean>
  },
): Promise<ClusterGateway> {
  const gatewayLog = new GatewayLog(redis, options)
  await gatewayLog.raiseSeq(currentSeq())
  usePresence({
    node,
    change: (key, delta) => {
      gatewayLog.appendPresence(node, key, delta).catch((error: unknown) => {
        log.error('gateway log: a presence change could not be appended (lost)', { error: String(error) })
      })
    },
  })
  // Who is online on the other nodes as of a sequence; the log after it brings their changes.
  const snapshot = await gatewayLog.presence()
  const after = snapshot.seq
  advanceSeq(after)
  for (const [other, counts] of snapshot.nodes)
    if (other !== node) for (const [key, n] of counts) applyPresence(other, key, n)
  const consumer = startConsumer({
    url,
    after,
    deliver(seq, entry) {
      // Every entry moves the sequence this node has applied (a Resume replays up to it), whatever its kind.
      advanceSeq(seq)
      if (isGatewayEntry(entry)) return applyLogged(seq, entry)
      // A node forgot its token answers (a logout, a revocation): every node does.
      if (entry.kind === 'forget-callers') return forgetCallersHere()
      // A node's committed write forgot cached rows: every node forgets them.
      if (entry.kind === 'invalidate') return invalidateHere(entry.cache, entry.keys)
      // Another node's session came or went (this node counted its own already).
      if (entry.kind === 'presence')
        return entry.node === node ? undefined : applyPresence(entry.node, entry.key, entry.delta)
    },
  })
  const outbox = startOutbox(gatewayLog)
  const append = (draft: Draft) => {
    // Inside a transaction: an outbox row of it, relayed after its COMMIT.
    if (outbox.hold(draft)) return
    gatewayLog.appendNow(draft).catch((error: unknown) => {
      log.error('gateway log: an entry could not be appended (lost)', { kind: draft.kind, error: String(error) })
    })
  }
  useGatewayLog({
    dispatch: (topics, type, data) => append({ kind: 'dispatch', topics, type, data }),
    userDispatch: (userId, audience, type, data) => append({ kind: 'user-dispatch', userId, audience, type, data }),
    call: (call) => append(call),
    // Records outlive a session's last save by the resume window (and a little: saves and refreshes are async).
    sessions: sessionRegistry(redis, gatewayLog, node, config().gatewayResumeWindowMs + 20_000),
    async caughtUp() {
      const by = performance.now() + CATCH_UP_MS
      const left = () => by - performance.now()
      try {
        // A relay begun now appends every row committed before it (one a relay elsewhere holds: once that one is done).
        if (
          !(await within(
            outbox.relay().then(() => true),
            left(),
          ))
        )
          return false
        const end = await within(gatewayLog.seq(), left())
        if (end === undefined) return false
        while (consumer.applied() < end) {
          if (left() <= 0) return false
          await Bun.sleep(5)
        }
        return true
      } catch {
        return false
      }
    },
  })
  shareForgetCallers(() => append({ kind: 'forget-callers' }))
  shareInvalidations((cache, keys) => append({ kind: 'invalidate', cache, keys }))
  // The sessions of a node that died (its lease gone) no longer count, here and for nodes that start later.
  const reaper = setInterval(async () => {
    for (const other of presenceNodes()) {
      try {
        if (await isLive(other)) continue
        dropPresenceOf(other)
        await gatewayLog.forgetPresence(other)
      } catch {} // Redis away: asked again at the next round
    }
  }, PRESENCE_CHECK_MS)
  reaper.unref?.()
  return {
    log: gatewayLog,
    consumer,
    async stop() {
      clearInterval(reaper)
      usePresence(undefined)
      shareForgetCallers(undefined)
      shareInvalidations(undefined)
      useGatewayLog(undefined)
      await outbox.stop()
      await consumer.stop()
    },
  }
}
