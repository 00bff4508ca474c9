// The event webhooks worker's view of each endpoint (event-webhooks.ts): how many of its calls are in flight, and a
// circuit breaker. An endpoint is a URL's origin (scheme, host, port): every lobby and application whose URL is on it
// shares its breaker and its cap. Held per node, in memory: a node that starts knows nothing of an endpoint yet.
//
// The breaker: after BREAKER_FAILURES failures in a row an endpoint is open: no call goes to it (the worker parks its
// rows until then) for BREAKER_FIRST_MS, doubling with each probe that fails, up to BREAKER_MAX_MS. Then one call (a
// probe) goes; a 2xx closes it, a failure opens it again. A call that was already in flight when it opened and fails
// later does not lengthen the wait.

export const BREAKER_FAILURES = 3
export const BREAKER_FIRST_MS = 2_000
export const BREAKER_MAX_MS = 60_000

type Endpoint = {
  /** Calls to it in flight on this node. */
  inFlight: number
  /** Failures in a row (0 after a 2xx). */
  failures: number
  /** How many times it opened since its last 2xx. */
  opened: number
  /** While open: no call before this time. */
  openUntil: number
}

export type Gate = { kind: 'call'; cap: number } | { kind: 'open'; until: number }

export class Endpoints {
  private readonly byOrigin = new Map<string, Endpoint>()

  private get(origin: string): Endpoint {
    let e = this.byOrigin.get(origin)
    if (!e) this.byOrigin.set(origin, (e = { inFlight: 0, failures: 0, opened: 0, openUntil: 0 }))
    return e
  }

  /** Whether a call may go to `origin` now, and how many may be in flight there (one probe while half open). */
  gate(origin: string, now: number, cap: number): Gate {
    const e = this.byOrigin.get(origin)
    if (!e || e.failures < BREAKER_FAILURES) return { kind: 'call', cap }
    if (now < e.openUntil) return { kind: 'open', until: e.openUntil }
    return { kind: 'call', cap: 1 }
  }

  inFlight(origin: string): number {
    return this.byOrigin.get(origin)?.inFlight ?? 0
  }

  started(origin: string): void {
    this.get(origin).inFlight++
  }

  /** A call to `origin` ended (`ok`: a 2xx). */
  ended(origin: string, ok: boolean, now: number): void {
    const e = this.get(origin)
    e.inFlight--
    if (ok) {
      e.failures = 0
      e.opened = 0
      e.openUntil = 0
    } else {
      e.failures++
      // It opens at the threshold, and again when a probe (a call after the wait) failed.
      if (e.failures === BREAKER_FAILURES || (e.failures > BREAKER_FAILURES && now >= e.openUntil)) {
        e.openUntil = now + Math.min(BREAKER_FIRST_MS * 2 ** e.opened, BREAKER_MAX_MS)
        e.opened++
      }
    }
    // A closed, idle endpoint is forgotten (the map holds only what is in use or failing).
    if (e.inFlight === 0 && e.failures === 0) this.byOrigin.delete(origin)
  }

  /** Whether the endpoint is open or half open (failing). */
  failing(origin: string): boolean {
    return (this.byOrigin.get(origin)?.failures ?? 0) >= BREAKER_FAILURES
  }
}
