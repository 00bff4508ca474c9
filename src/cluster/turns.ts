// Whose turn it is to run a periodic job (core/turns.ts) among the nodes: a lease per job in Redis
// (`cluster:turn:<job>`). The node that holds it renews it each time it asks (so it keeps the job), the others find it
// taken; it lasts three of the job's periods, so a node that died hands the job over within three periods. Redis
// away or silent (no answer within `askMs`): nobody's turn, the job skips it (it is only clean-up) and says so once.
import { log } from '../core/log'
import { useTurns } from '../core/turns'
import { Lease } from './leases'
import type { Redis } from './redis'

/** How long a node waits for the lease's answer before the job skips its turn. */
const ASK_MS = 2000

export function shareTurns(redis: Redis, owner: string, { askMs = ASK_MS } = {}): () => void {
  const leases = new Map<string, Lease>()
  let failing = false
  useTurns(async (work, everyMs) => {
    let lease = leases.get(work)
    if (!lease) leases.set(work, (lease = new Lease(redis, `cluster:turn:${work}`, owner, { ttlMs: everyMs * 3 })))
    const held = lease
    let timer: Timer | undefined
    try {
      // A silent connection (Redis stopped, a network that drops packets) never answers: without the bound, a job
      // that asks would wait for good, and those that run one at a time would never run again.
      const mine = await Promise.race([
        (async () => (await held.renew()) || (await held.acquire()))(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer from Redis within ${askMs} ms`)), askMs)
        }),
      ])
      if (failing) log.notice('periodic jobs: Redis answers again; turns are taken again')
      failing = false
      return mine
    } catch (error) {
      if (!failing)
        log.warn('periodic jobs: Redis did not answer; jobs skip their turns until it does', {
          work,
          error: String(error),
        })
      failing = true
      return false
    } finally {
      clearTimeout(timer)
    }
  })
  return () => {
    useTurns(undefined)
    for (const lease of leases.values()) lease.release().catch(() => {})
  }
}
