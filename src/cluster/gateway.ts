// The Gateway of a node in a cluster: the bus's dispatches and session calls go to the log (log.ts) instead of this
// process's sockets, and every entry of the log, whichever node appended it, comes back to every node in sequence
// order and is applied to that node's own sessions (gateway/server.ts applyLogged). So a lobby message posted through
// one node reaches the members' sockets on all of them with one `s`, and a logout on one node closes the sockets of
// that session wherever they are; a session is kept in Redis for a Resume on any node (sessions.ts). Not yet: the
// outbox (a node killed between its COMMIT and its append loses that event), presence.
import { randomUUID } from 'node:crypto'
import { config } from '../config'
import { forgetCallersHere, shareForgetCallers } from '../core/caller'
import { invalidateHere, shareInvalidations } from '../db/cache'
import { log } from '../core/log'
import { applyLogged, useGatewayLog } from '../gateway/server'
import { advanceSeq, currentSeq } from '../gateway/replay'
import { type Consumer, type Draft, GatewayLog, type LogOptions, startConsumer } from './log'
import type { Redis } from './redis'
import { sessionRegistry } from './sessions'

export type ClusterGateway = { log: GatewayLog; consumer: Consumer; stop(): Promise<void> }

/** Read the log from its current end and send the bus through it; `stop()` gives the bus back to this process. */
export async function startClusterGateway(
  url: string,
  redis: Redis,
  options: LogOptions = {},
): Promise<ClusterGateway> {
  const gatewayLog = new GatewayLog(redis, options)
  const after = await gatewayLog.raiseSeq(currentSeq())
  advanceSeq(after)
  const consumer = startConsumer({
    url,
    after,
    deliver(seq, entry) {
      // Every entry moves the sequence this node has applied (a Resume replays up to it), whatever its kind.
      advanceSeq(seq)
      // A node forgot its token answers (a logout, a revocation): every node does.
      if (entry.kind === 'forget-callers') return forgetCallersHere()
      // A node's committed write forgot cached rows: every node forgets them.
      if (entry.kind === 'invalidate') return invalidateHere(entry.cache, entry.keys)
      // Presence: not wired yet.
      if (entry.kind === 'presence') return
      applyLogged(seq, entry)
    },
  })
  const append = (draft: Draft) => {
    gatewayLog.appendInOrder(randomUUID(), draft).catch((error: unknown) => {
      log.error('gateway log: an entry could not be appended (lost)', { kind: draft.kind, error: String(error) })
    })
  }
  useGatewayLog({
    dispatch: (topics, type, data) => append({ kind: 'dispatch', topics, type, data }),
    userDispatch: (userId, audience, type, data) => append({ kind: 'user-dispatch', userId, audience, type, data }),
    call: (call) => append(call),
    // Records outlive a session's last save by the resume window (and a little: saves and refreshes are async).
    sessions: sessionRegistry(redis, gatewayLog, randomUUID(), config().gatewayResumeWindowMs + 20_000),
  })
  shareForgetCallers(() => append({ kind: 'forget-callers' }))
  shareInvalidations((cache, keys) => append({ kind: 'invalidate', cache, keys }))
  return {
    log: gatewayLog,
    consumer,
    async stop() {
      shareForgetCallers(undefined)
      shareInvalidations(undefined)
      useGatewayLog(undefined)
      await consumer.stop()
    },
  }
}
