// Leases in Redis: a key held by one owner for a time (SET NX PX), renewed and released only by that owner (a script
// compares the owner first), so a holder that stalled past its time cannot renew or delete what another now holds.
// On top, the snowflake node id: each node holds the lowest free id of 0–1023 and renews it; two live nodes never mint
// ids with the same node bits. Not wired yet: core/snowflake.ts still takes its bits from the process id.
import { luaScript, type Redis } from './redis'

/** KEYS: the key. ARGV: the owner, ttl (ms). 1 when the owner still held it and it was extended. */
export const RENEW = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)
/** KEYS: the key. ARGV: the owner. Deleted only if the owner still holds it. */
export const RELEASE = luaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

export type LeaseOptions = {
  /** How long the lease lasts in Redis after each acquire or renew. */
  ttlMs: number
  /**
   * How much sooner the holder stops counting on it: the time a renew takes to arrive, and clock drift between
   * machines, must fit in it (default a quarter of ttlMs).
   */
  marginMs?: number
}

/** One key held by `owner` (a value no other holder uses: a node's instance id). */
export class Lease {
  private until = 0
  private readonly marginMs: number

  constructor(
    private readonly redis: Redis,
    readonly key: string,
    readonly owner: string,
    private readonly options: LeaseOptions,
    /** When the key was already taken for this owner by a request sent at this time (performance.now()). */
    takenAt?: number,
  ) {
    this.marginMs = options.marginMs ?? options.ttlMs / 4
    if (takenAt !== undefined) this.until = takenAt + options.ttlMs - this.marginMs
  }

  /**
   * Whether this holder may still act as the owner: until its last acquire or renew was sent plus the time, less the
   * margin. Redis keeps the key at least that long, so no other holder can have it yet.
   */
  held(): boolean {
    return performance.now() < this.until
  }

  /** Take the key if nobody holds it. */
  async acquire(): Promise<boolean> {
    const sent = performance.now()
    const taken = (await this.redis.set(this.key, this.owner, 'PX', this.options.ttlMs, 'NX')) === 'OK'
    if (taken) this.until = sent + this.options.ttlMs - this.marginMs
    return taken
  }

  /** Extend the time if this owner still holds the key; false once it expired (whoever holds it since). */
  async renew(): Promise<boolean> {
    const sent = performance.now()
    const renewed = Number(await RENEW(this.redis, [this.key], [this.owner, this.options.ttlMs])) === 1
    this.until = renewed ? sent + this.options.ttlMs - this.marginMs : 0
    return renewed
  }

  /** Give the key up if this owner still holds it. */
  async release(): Promise<void> {
    this.until = 0
    await RELEASE(this.redis, [this.key], [this.owner])
  }
}

/** Snowflakes have 10 bits for the worker and process: ids 0–1023. */
export const NODE_IDS = 1024
export const nodeIdKey = (id: number) => `cluster:node-id:${id}`

// KEYS: the candidate keys, lowest id first. ARGV: owner, ttl (ms). The index taken (0-based), or -1: all are held.
const TAKE_FIRST_FREE = luaScript(`
for i, key in ipairs(KEYS) do
  if redis.call('SET', key, ARGV[1], 'PX', ARGV[2], 'NX') then return i - 1 end
end
return -1
`)

export type NodeIdLease = {
  readonly id: number
  /** Whether the id is still this node's to mint with (see Lease.held). */
  held(): boolean
  /** Stop renewing and give the id back. */
  release(): Promise<void>
}

/**
 * Take the lowest free node id and keep it: renewed every `renewMs` while it lasts. When a renew finds it gone, or
 * Redis stays away until the lease's time is up, the node has lost it: `onLost` is called once and renewing stops.
 */
export async function leaseNodeId(
  redis: Redis,
  owner: string,
  {
    ttlMs = 20_000,
    renewMs = 5_000,
    marginMs,
    onLost,
  }: Partial<LeaseOptions> & {
    renewMs?: number
    onLost?: () => void
  } = {},
): Promise<NodeIdLease> {
  const keys = Array.from({ length: NODE_IDS }, (_, id) => nodeIdKey(id))
  const sent = performance.now()
  const id = Number(await TAKE_FIRST_FREE(redis, keys, [owner, ttlMs]))
  if (id < 0) throw new Error(`every node id (0–${NODE_IDS - 1}) is leased`)
  const lease = new Lease(redis, keys[id], owner, { ttlMs, marginMs }, sent)

  let lost = false
  const lose = () => {
    if (lost) return
    lost = true
    clearInterval(timer)
    onLost?.()
  }
  const timer = setInterval(async () => {
    try {
      if (!(await lease.renew())) lose()
    } catch {
      if (!lease.held()) lose() // Redis away: the id stays ours only while the last renew's time lasts
    }
  }, renewMs)
  return {
    id,
    held: () => !lost && lease.held(),
    async release() {
      lost = true
      clearInterval(timer)
      await lease.release()
    },
  }
}
