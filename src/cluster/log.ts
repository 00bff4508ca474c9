// The Gateway's log for several nodes: one Redis Stream, `gw:log`, whose entry ids are the global dispatch sequence
// (`<seq>-0`). One Lua script appends (an event id seen before gives back its sequence, so a relay may run twice);
// every node reads the stream from the last sequence it applied and applies each entry once, in order; a Resume on
// any node reads the range it missed. Redis keeps the stream in its append-only file (appendfsync everysec): an
// appended entry survives a restart of Redis.
//
// What an entry is: a dispatch (its frame made once, here, with `s` = the sequence, for topics or for one user's
// sessions that see an audience), a control call every node applies to its own sessions in log order, presence, and
// invalidations of caches and of the token cache (cluster/gateway.ts applies each kind).
import { randomUUID } from 'node:crypto'
import type { Audience, LoggedEntry, SessionCall } from '../gateway/bus'
import { log } from '../core/log'
import { luaScript, openBlockingRedis, type Redis } from './redis'
import { mark, tracing, wallMs } from './trace'

export const SEQ_KEY = 'gw:seq'
export const LOG_KEY = 'gw:log'
const eventKey = (eventId: string) => `gw:ev:${eventId}`

/** Entries every node applies to its own sessions, caches and counts, in log order. */
export type ControlEntry =
  /** The Gateway bus's calls that change sessions (subscribe, close, change of auth session). */
  | SessionCall
  /** A Gateway session of a user (applicationId: an OAuth2 session's application, null for a user session) on a node. */
  /** A node's sessions online under a presence key (gateway/presence.ts) went up or down by one. */
  | { kind: 'presence'; node: string; key: string; delta: 1 | -1 }
  /** Keys of one cache changed (null: all of it). */
  | { kind: 'invalidate'; cache: string; keys: string[] | null }
  /** Token answers may be stale (a logout, a revocation): every node forgets its cached callers. */
  | { kind: 'forget-callers' }

type DispatchTarget =
  | { kind: 'dispatch'; topics: string[] }
  | { kind: 'user-dispatch'; userId: string; audience: Audience }

/** What `append` takes: a dispatch names its event type and data (JSON text); its frame is made with the sequence. */
export type Draft = ControlEntry | (DispatchTarget & { type: string; data: string })
/** What the log holds: a dispatch's frame is the Gateway's op 0 frame with `s` filled. */
export type LogEntry = ControlEntry | (DispatchTarget & { frame: string })
export type Sequenced = { seq: number; entry: LogEntry }

/** What the Gateway's sessions apply (dispatches and session calls); the rest is presence and the caches'. */
export function isGatewayEntry(entry: LogEntry): entry is LoggedEntry {
  return entry.kind !== 'presence' && entry.kind !== 'invalidate' && entry.kind !== 'forget-callers'
}

// A dispatch is stored as `t` (topics) or `u` + `a` (user, audience) and `f` (the frame); other entries as `k` (kind)
// and `d` (the rest, JSON). The frame's field order is gateway/protocol.ts frame()'s: op, d, s, t.
function fieldsOf(draft: Draft): { before: string; after: string; fields: string[] } {
  if (draft.kind === 'dispatch' || draft.kind === 'user-dispatch') {
    const before = `{"op":0,"d":${draft.data},"s":`
    const after = `,"t":${JSON.stringify(draft.type)}}`
    if (draft.kind === 'user-dispatch')
      return { before, after, fields: ['u', draft.userId, 'a', JSON.stringify(draft.audience)] }
    if (draft.topics.some((topic) => topic.includes(',')))
      throw new Error(`a topic holds a comma: ${draft.topics.join(' ')}`)
    return { before, after, fields: ['t', draft.topics.join(',')] }
  }
  const { kind, ...rest } = draft
  return { before: '', after: '', fields: ['k', kind, 'd', JSON.stringify(rest)] }
}

/** An entry from its stream fields; undefined for one this version cannot read (a newer node wrote it). */
export function decodeEntry(fields: string[]): LogEntry | undefined {
  const at = new Map<string, string>()
  for (let i = 0; i + 1 < fields.length; i += 2) at.set(fields[i], fields[i + 1])
  const frame = at.get('f')
  const topics = at.get('t')
  if (frame !== undefined && topics !== undefined) return { kind: 'dispatch', topics: topics.split(','), frame }
  const userId = at.get('u')
  const audience = parsed(at.get('a'))
  if (frame !== undefined && userId !== undefined && audience !== undefined)
    return { kind: 'user-dispatch', userId, audience: audience as Audience, frame }
  const kind = at.get('k')
  const rest = parsed(at.get('d'))
  if (kind === undefined || !CONTROL_KINDS.has(kind) || typeof rest !== 'object' || rest === null) return undefined
  return { ...rest, kind } as ControlEntry
}

function parsed(json: string | undefined): unknown {
  if (json === undefined) return undefined
  try {
    return JSON.parse(json)
  } catch {
    return undefined
  }
}

const CONTROL_KINDS = new Set<string>([
  'subscribe-user',
  'unsubscribe-user',
  'subscribe-users',
  'unsubscribe-users',
  'close-auth-session',
  'close-user',
  'close-grants',
  'change-auth-session',
  'take-session',
  'presence',
  'invalidate',
  'forget-callers',
] satisfies ControlEntry['kind'][])

const sequenceOf = (id: string) => Number(id.slice(0, id.indexOf('-')))

// KEYS: gw:seq, gw:log, gw:ev:<event id>. ARGV: the stream's length bound, the dedupe key's seconds, the frame before
// and after its `s` ('' for no frame), then field, value pairs. The sequence and the entry id are one number, so
// readers see no gap (one INCR per XADD, in one script) and a reader's position is a sequence.
const APPEND = luaScript(`
local known = redis.call('GET', KEYS[3])
if known then return tonumber(known) end
local seq = redis.call('INCR', KEYS[1])
local id = string.format('%d', seq)
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
if ARGV[3] ~= '' then
  fields[#fields + 1] = 'f'
  fields[#fields + 1] = ARGV[3] .. id .. ARGV[4]
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], id .. '-0', unpack(fields))
redis.call('SET', KEYS[3], id, 'EX', ARGV[2])
return seq
`)

const presenceKey = (node: string) => `gw:presence:${node}`
const PRESENCE_NODES = 'gw:presence:nodes'

// The presence change's entry (as APPEND, without the dedupe: a change is appended once) and, in the same step, the
// node's counts that a starting node loads: KEYS gw:seq, gw:log, the node's hash, the set of nodes. ARGV: the stream's
// bound, node, key, delta, then the entry's fields.
const APPEND_PRESENCE = luaScript(`
local seq = redis.call('INCR', KEYS[1])
local fields = {}
for i = 5, #ARGV do fields[#fields + 1] = ARGV[i] end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[1], string.format('%d', seq) .. '-0', unpack(fields))
if redis.call('HINCRBY', KEYS[3], ARGV[3], ARGV[4]) <= 0 then redis.call('HDEL', KEYS[3], ARGV[3]) end
redis.call('SADD', KEYS[4], ARGV[2])
return seq
`)

// Every node's counts and the sequence they are as of, in one step: KEYS gw:seq, the set of nodes. Returns the
// sequence, then node and its hash's flat field list for each node.
const PRESENCE_SNAPSHOT = luaScript(`
local out = { tonumber(redis.call('GET', KEYS[1]) or '0') }
for _, node in ipairs(redis.call('SMEMBERS', KEYS[2])) do
  out[#out + 1] = node
  out[#out + 1] = redis.call('HGETALL', 'gw:presence:' .. node)
end
return out
`)

const RAISE = luaScript(`
local seq = tonumber(redis.call('GET', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if seq < floor then
  redis.call('SET', KEYS[1], ARGV[1])
  return floor
end
return seq
`)

/** How long the id of an entry appended outside the outbox is remembered (appendNow). */
const RESEND_SECONDS = 60

export type LogOptions = {
  /** Entries the stream keeps, about (MAXLEN ~): how far back a Resume reaches. ~60 MB at 600 bytes an entry. */
  maxLength?: number
  /**
   * How long an event id is remembered, so that relaying an event again appends nothing. It must outlive the time
   * between a row's first append and its relay again: a relay whose COMMIT never came (its node killed, PostgreSQL
   * gone meanwhile) leaves its rows, relayed again by the next commit's relay or the sweeper (ORPHAN_MS) — seconds —
   * or once PostgreSQL answers again: 600 s covers an outage of ten minutes. A relay that committed deletes its keys
   * at once (forget), so Redis holds only those of events in flight, not ~100 B per event for 600 s (0.6 GB at the
   * 10 000 events a second of docs/SCALING.md's 100 000 sockets).
   */
  dedupeSeconds?: number
}

/** Appends and ranges over one connection (shared by a node's writers). */
export class GatewayLog {
  private readonly maxLength: number
  private readonly dedupeSeconds: number

  constructor(
    private readonly redis: Redis,
    { maxLength = 100_000, dedupeSeconds = 600 }: LogOptions = {},
  ) {
    this.maxLength = maxLength
    this.dedupeSeconds = dedupeSeconds
  }

  /** Append once per `eventId` (the outbox row's id): the entry's sequence, or the one it got the first time. */
  async append(eventId: string, draft: Draft): Promise<number> {
    const { before, after, fields } = fieldsOf(draft)
    const seq = await APPEND(
      this.redis,
      [SEQ_KEY, LOG_KEY, eventKey(eventId)],
      [this.maxLength, this.dedupeSeconds, before, after, ...fields],
    )
    return Number(seq)
  }

  /**
   * The relay of these events committed (their outbox rows are gone): none can be appended again, so their dedupe
   * keys go now rather than when they lapse.
   */
  async forget(eventIds: string[]): Promise<void> {
    if (eventIds.length > 0) await this.redis.unlink(...eventIds.map(eventKey))
  }

  /**
   * Append in the order of the calls: what one node appends gets its sequences in that order (a client's writes one
   * after another stay in order). The script is sent whole each time (EVAL, not EVALSHA): the fall back from an
   * EVALSHA that Redis no longer knows (after a restart) to EVAL would let a later append overtake it, and a
   * connection keeps its commands in order only if none is sent again.
   */
  appendInOrder(eventId: string, draft: Draft, dedupeSeconds = this.dedupeSeconds): Promise<number> {
    const { before, after, fields } = fieldsOf(draft)
    return this.redis
      .eval(
        APPEND.source,
        3,
        SEQ_KEY,
        LOG_KEY,
        eventKey(eventId),
        this.maxLength,
        dedupeSeconds,
        before,
        after,
        ...fields,
      )
      .then(Number)
  }

  /**
   * Append, in call order, an entry no outbox row holds (given outside a transaction): nothing relays it again, only
   * ioredis may send its command again after a lost connection (openRedis: within a few reconnect attempts), so its
   * id is remembered for RESEND_SECONDS, not dedupeSeconds.
   */
  appendNow(draft: Draft): Promise<number> {
    return this.appendInOrder(randomUUID(), draft, RESEND_SECONDS)
  }

  /**
   * Raise the sequence to at least `floor` (a node that dispatched on its own before it joined: its sockets must never
   * see `s` go back); the sequence after it. A fresh node's floor is 0: nothing changes.
   */
  async raiseSeq(floor: number): Promise<number> {
    return Number(await RAISE(this.redis, [SEQ_KEY], [floor]))
  }

  /** A presence change, and the node's counts with it (in call order with appendInOrder's: one connection, EVAL). */
  appendPresence(node: string, key: string, delta: 1 | -1): Promise<number> {
    const { fields } = fieldsOf({ kind: 'presence', node, key, delta })
    return this.redis
      .eval(
        APPEND_PRESENCE.source,
        4,
        SEQ_KEY,
        LOG_KEY,
        presenceKey(node),
        PRESENCE_NODES,
        this.maxLength,
        node,
        key,
        delta,
        ...fields,
      )
      .then(Number)
  }

  /** Every node's presence counts and the sequence they are as of: a starting node reads the log after it. */
  async presence(): Promise<{ seq: number; nodes: Map<string, Map<string, number>> }> {
    const reply = (await PRESENCE_SNAPSHOT(this.redis, [SEQ_KEY, PRESENCE_NODES], [])) as [number, ...unknown[]]
    const nodes = new Map<string, Map<string, number>>()
    for (let i = 1; i + 1 < reply.length; i += 2) {
      const flat = reply[i + 1] as string[]
      const counts = new Map<string, number>()
      for (let j = 0; j + 1 < flat.length; j += 2) counts.set(flat[j], Number(flat[j + 1]))
      nodes.set(reply[i] as string, counts)
    }
    return { seq: Number(reply[0]), nodes }
  }

  /** A dead node's counts, gone for good (any node may do it; doing it twice is harmless). */
  async forgetPresence(node: string): Promise<void> {
    await this.redis.multi().del(presenceKey(node)).srem(PRESENCE_NODES, node).exec()
  }

  /** The last sequence handed out (0: none yet): where a starting node begins to read. */
  async seq(): Promise<number> {
    return Number((await this.redis.get(SEQ_KEY)) ?? 0)
  }

  /**
   * The entries after `afterSeq` up to `uptoSeq` (both sequences), oldest first; `trimmed` when the stream no longer
   * holds the first of them (a Resume from there gets op 9). Entries this version cannot read are left out.
   */
  async range(
    afterSeq: number,
    uptoSeq: number,
  ): Promise<{ trimmed: true } | { trimmed: false; entries: Sequenced[] }> {
    if (uptoSeq <= afterSeq) return { trimmed: false, entries: [] }
    // One transaction: the entries and the sequence at the same moment.
    const replies = await this.redis
      .multi()
      .xrange(LOG_KEY, `${afterSeq + 1}-0`, `${uptoSeq}-0`)
      .get(SEQ_KEY)
      .exec()
    if (!replies) throw new Error('the range transaction was aborted')
    for (const [error] of replies) if (error) throw error
    const items = replies[0][1] as [id: string, fields: string[]][]
    const seqNow = Number(replies[1][1] ?? 0)
    const first = items.length ? sequenceOf(items[0][0]) : undefined
    if (first !== afterSeq + 1 && Math.min(uptoSeq, seqNow) > afterSeq) return { trimmed: true }
    const entries: Sequenced[] = []
    for (const [id, fields] of items) {
      const entry = decodeEntry(fields)
      if (entry) entries.push({ seq: sequenceOf(id), entry })
    }
    return { trimmed: false, entries }
  }
}

export type ConsumerOptions = {
  url: string
  /** The last sequence already applied: delivery starts after it. */
  after: number
  /** Called once per entry, in sequence order; the entry counts as applied even if this throws. */
  deliver(seq: number, entry: LogEntry): void
  /**
   * Delivery could not go on in one sequence: the entries after `applied` were trimmed before this reader got them
   * (`seq` > `applied`), or Redis lost its last writes and counts from `seq` < `applied` again (a machine crash under
   * appendfsync everysec). Delivery goes on after `seq`; sessions that saw `applied` cannot resume across the break.
   */
  onBreak?(applied: number, seq: number): void
  /** XREAD's BLOCK (ms) and the watchdog (ms) that replaces a connection whose read has not settled by then. */
  blockMs?: number
  watchdogMs?: number
  /** Retry pause after a failed read (ms). */
  retryMs?: number
}

export type Consumer = {
  /** The last sequence delivered. */
  applied(): number
  /** Connections opened (the first one, and each replacement after a silent read). */
  connections(): number
  stop(): Promise<void>
}

class Deaf extends Error {}

/**
 * Read the log on a connection of its own (`XREAD COUNT 1000 BLOCK 1000 STREAMS gw:log <applied>-0`) and deliver each
 * entry once, in order. A failed read (Redis restarting) is retried; a read that has not settled after the watchdog's
 * time (a silent connection, or a blocking read that ioredis will never settle) gets a new connection.
 */
export function startConsumer(options: ConsumerOptions): Consumer {
  const { url, deliver, blockMs = 1000, watchdogMs = 5000, retryMs = 100 } = options
  const onBreak =
    options.onBreak ?? ((applied, seq) => log.warn('gateway log: delivery broke', { applied, seq, stream: LOG_KEY }))
  let applied = options.after
  let opened = 0
  let stopped = false
  let connection: Redis
  const open = () => {
    opened += 1
    connection = openBlockingRedis(url, 'gw-log-reader')
    connection.on('error', () => {}) // ioredis would print each reconnect attempt; the loop below logs an outage once
  }
  open()

  let timer: Timer | undefined
  let wake: (() => void) | undefined
  const watched = <T>(command: Promise<T>): Promise<T> =>
    Promise.race([
      command,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Deaf()), watchdogMs)
      }),
    ]).finally(() => clearTimeout(timer))

  const apply = (items: [id: string, fields: string[]][]) => {
    const read = tracing ? wallMs() : 0
    for (const [id, fields] of items) {
      const seq = sequenceOf(id)
      if (seq <= applied) continue
      if (seq > applied + 1) onBreak(applied, seq - 1)
      applied = seq
      const entry = decodeEntry(fields)
      if (!entry) {
        log.warn('gateway log: an entry this version cannot read was skipped', { seq })
        continue
      }
      try {
        deliver(seq, entry)
      } catch (error) {
        log.error('gateway log: delivering an entry failed', { seq, error: String(error) })
      }
      if (tracing) {
        mark(seq, 'read', read)
        mark(seq, 'published', wallMs())
      }
    }
  }

  const run = async () => {
    // After a reconnect, Redis may have come back without its last writes: the sequence is then below `applied`.
    let checkSeq = true
    let failing = false
    while (!stopped) {
      const reader = connection
      try {
        if (checkSeq) {
          const seq = Number((await watched(reader.get(SEQ_KEY))) ?? 0)
          if (seq < applied) {
            onBreak(applied, seq)
            applied = seq
          }
          checkSeq = false
        }
        const reply = await watched(reader.xread('COUNT', 1000, 'BLOCK', blockMs, 'STREAMS', LOG_KEY, `${applied}-0`))
        if (failing) log.notice('gateway log: reading again', { applied })
        failing = false
        if (reply) for (const [, items] of reply) apply(items)
      } catch (error) {
        if (stopped) break
        checkSeq = true
        if (error instanceof Deaf) {
          log.warn('gateway log: the reader was silent, reconnecting', { applied, watchdogMs })
          reader.disconnect()
          open()
          continue
        }
        if (!failing) log.warn('gateway log: reading failed, retrying', { applied, error: String(error) })
        failing = true
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, retryMs)
        })
      }
    }
  }
  const running = run()

  return {
    applied: () => applied,
    connections: () => opened,
    async stop() {
      stopped = true
      connection.disconnect()
      wake?.()
      await running
    },
  }
}
