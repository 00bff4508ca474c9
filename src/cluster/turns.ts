// Whose turn it is to run a periodic job (core/turns.ts) among the nodes: a lease per job in Redis
// (`cluster:turn:<job>`). The node that holds it renews it each time it asks (so it keeps the job), the others find it
// taken; it lasts three of the job's periods, so a node that died hands the job over within three periods. Redis
// away: nobody's turn (the job waits; it is only clean-up).
import { useTurns } from '../core/turns'
import { Lease } from './leases'
import type { Redis } from './redis'

export function shareTurns(redis: Redis, owner: string): () => void {
  const leases = new Map<string, Lease>()
  useTurns(async (work, everyMs) => {
    let lease = leases.get(work)
    if (!lease) leases.set(work, (lease = new Lease(redis, `cluster:turn:${work}`, owner, { ttlMs: everyMs * 3 })))
    try {
      return (await lease.renew()) || (await lease.acquire())
    } catch {
      return false
    }
  })
  return () => {
    useTurns(undefined)
    for (const lease of leases.values()) lease.release().catch(() => {})
  }
}
