// The Gateway's outbox (SCALE-OUT.md §4): what the bus is given inside a write's transaction is written to
// `gateway_outbox` in that same transaction, just before its COMMIT, and relayed to the log after it; so a node that
// dies between its COMMIT and its append loses no event: its rows wait in the table and another node relays them.
// A relay appends with the row's event id (log.ts: an id seen before appends nothing), so a row relayed twice (a relay
// that died before its COMMIT) reaches the sockets once; a relay that committed forgets its ids (no row of them is
// left to relay again).
//
// Order. For one key (a topic, or one user's dispatches) the log holds the events in their transactions' commit order;
// for events with no key in common it keeps none (they had none before either), so nothing forces unrelated topics
// through one queue:
// - a transaction takes a lock per key of its entries (keysOf; transaction-long, sorted) before it inserts, so a second
//   transaction on a key gets its ids only after the first has committed: ids follow commit order per key;
// - each key falls in one of PARTITIONS partitions (partitionOf, the same on every node), and an entry's row is
//   written once per partition of its keys (one event id: appended once);
// - a relay holds the relay lock of each partition it takes (sorted, transaction-long: a relay of one of them
//   elsewhere waits, relays of other partitions go on beside it), deletes those partitions' rows in id order and
//   appends them, entries in order of their first row's id, before it commits. A relay of a partition that waited
//   finds the rows gone and takes those committed since. So a partition's rows reach the log in id order, one relay
//   after another, and a row is never appended before a row of its key committed earlier. An entry whose rows lie in
//   partitions the relay does not hold (its keys span several) is appended only by a relay that holds them all: the
//   relay rolls back and takes the wider set (store.ts WiderRelay), so the entry comes after every older row of each
//   of its keys.
// Every COMMIT has its partitions relayed by steps of this node that begin after it (right behind it, on its own
// connection, when none of them has a step under way here; else the next step of them, which takes every partition
// asked meanwhile: one step per partition at a time per node, so a hot partition's commits share them), and its answer
// waits for those (up to RELAY_WAIT_MS:
// Redis away, the write still commits and its answer goes; the events wait in the table):
// a client's writes one after another keep their order, and no answer waits for a relay of partitions it did not
// write. A node that dies after its COMMIT leaves its rows for the next relay of their partitions (the next write to
// them, on any node), or the sweeper's.
//
// The keys (keysOf). A dispatch's are its topics but an application's (an audience beside a lobby's topic: see keysOf); a user-dispatch's, a close-user's and a close-grants' its user
// (`user:<id>`). A subscription change (subscribe or unsubscribe, of one user or of many) takes its topics, not its
// users. What a client needs ordered is a change to topic X against the dispatches to X (a member allowed to view a
// channel gets its messages from then on; one removed, none after) and against other changes to X (the same user
// subscribed, then unsubscribed: every node ends with the later one, whichever transactions gave them): both share
// X's key. Nothing needs a subscription change ordered against its users' user-dispatches or closes: those reach a
// user's sessions whatever they follow, and a subscription shows only in which topics' dispatches reach them. So a
// transaction's locks are its topics and the users it dispatches to or closes: a guild change that re-follows every
// member (guilds/gateway.ts, a page of members per call) takes the guild's and its channels' topics however many
// members it has, where a lock per member made a large guild's transaction overflow PostgreSQL's lock table
// (max_locks_per_transaction x max_connections: "out of shared memory").
//
// Redis away: writes commit, rows pile up; the sweeper (every node, every SWEEP_MS) relays every partition once a row
// is older than ORPHAN_MS, in id order, when Redis is back; so does the next commit's relay of a partition.
import { randomUUID } from 'node:crypto'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { type CommitHolder, holdForCommit, transaction } from '../db/client'
import type { Draft, GatewayLog } from './log'
import {
  inPostgresTransaction,
  insertOutbox,
  oldestOutboxRow,
  type OutboxEvent,
  outboxPartitions,
  relayOutbox,
  WiderRelay,
} from './store'
import { mark, tracing, wallMs } from './trace'

/** How long an answer waits for the relay of its events after COMMIT. */
export const RELAY_WAIT_MS = 200
/** A row this old has lost its relay (its node died, or Redis was away): the sweeper relays it. */
export const ORPHAN_MS = 5000
const SWEEP_MS = 2000
/** Rows per relay step (one transaction). */
const BATCH = 500
/** How long relayed events' dedupe keys wait to be deleted together. */
const FORGET_MS = 100

/**
 * Partitions of the outbox: each is relayed on its own, side by side with the others. A key always falls in the same
 * one on every node (partitionOf): changing the number moves keys, so nodes of one cluster must agree on it (a node
 * that relays with another count keeps no order for the keys that moved while rows of theirs wait).
 */
export const PARTITIONS = 64
/**
 * How many times a relay widens to the partitions its rows' entries span (store.ts WiderRelay): each widening adds a
 * partition at least, so by then it holds them all.
 */
const WIDENINGS = PARTITIONS

/** A key's partition: 32-bit FNV-1a of its UTF-16 code units, modulo PARTITIONS. */
export function partitionOf(key: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193)
  return (h >>> 0) % PARTITIONS
}

type Held = { eventId: string; draft: Draft; parts?: number[] }
type Run = Parameters<NonNullable<CommitHolder<Held>['behind']>>[1]

/** The locks an entry takes (see the top): its topics, or its user. */
export function keysOf(draft: Draft): string[] {
  switch (draft.kind) {
    case 'dispatch': {
      // An application's topic is an audience, not an ordered stream: each dispatch to it is to a lobby as well
      // (lobbies/effects.ts lobbyAudience), whose key keeps its bot sessions' order per lobby, as for every member.
      // Keyed too, every write to any lobby of one application would queue on one key and one partition.
      const own = draft.topics.filter((topic) => !topic.startsWith('app:'))
      return own.length > 0 ? own : draft.topics
    }
    case 'subscribe-users':
    case 'unsubscribe-users':
      return draft.topics
    case 'subscribe-user':
    case 'unsubscribe-user':
      return [draft.topic]
    default:
      return 'userId' in draft ? [`user:${draft.userId}`] : []
  }
}

export type Outbox = {
  /** Hold a draft for the COMMIT of the transaction this context is in; false outside one (append it now). */
  hold(draft: Draft): boolean
  /** Relay what waits, in order (resolves once a relay that began after the call has ended). */
  relay(): Promise<void>
  stop(): Promise<void>
}

export function startOutbox(gatewayLog: GatewayLog, { sweepMs = SWEEP_MS, orphanMs = ORPHAN_MS } = {}): Outbox {
  // Tests only: die right after a COMMIT that wrote an event of this type (or a session call of this kind, such as
  // close-auth-session), before its relay (dieIfAsked).
  const dieAfter = process.env.LOBBY_TEST_DIE_AFTER_COMMIT

  // One relay at a time on this node; a caller waits for the first one that begins after its call.
  let asked = 0
  let relayed = 0
  let running: Promise<void> | undefined
  let failing = false
  const waiting: { ticket: number; resolve: () => void }[] = []

  // Tracing (trace.ts): when this node's rows reached their COMMIT (insert begins) and got past it, by event id.
  const traced = new Map<string, [committing: number, committed: number]>()
  // Tests only: the process ends here, after the COMMIT of such items and before any relay of them.
  const dieIfAsked = (items: Held[]) => {
    if (dieAfter && items.some((i) => i.draft.kind === dieAfter || ('type' in i.draft && i.draft.type === dieAfter)))
      process.kill(process.pid, 'SIGKILL')
  }
  /**
   * One relay step of the partitions `parts` in a transaction `run` runs: their oldest rows, appended in id order,
   * widened to every partition their entries span (WiderRelay: then in transactions of its own). `taken` is called
   * when the rows are there, `appended` once they are in the log (before the step's COMMIT, which only deletes them).
   * Returns how many rows it relayed.
   */
  const relayStep = async (
    parts: number[],
    run: Run,
    on?: { taken(): void; appended(rows: number): void },
  ): Promise<number> => {
    for (let widened = 0; ; widened++) {
      let ids: string[] = []
      const relay = async (events: OutboxEvent[]) => {
        on?.taken()
        ids = events.map((e) => e.eventId)
        const selected = tracing ? wallMs() : 0
        await Promise.all(
          events.map((e) => {
            const appended = gatewayLog.appendInOrder(e.eventId, JSON.parse(e.entry) as Draft)
            return tracing ? appended.then((seq) => traceRelay(seq, e.eventId, selected)) : appended
          }),
        )
        on?.appended(events.length)
      }
      try {
        const n = await relayOutbox(parts, BATCH, relay, run)
        if (n > 0) forgetLater(ids)
        return n
      } catch (error) {
        if (!(error instanceof WiderRelay) || widened >= WIDENINGS) throw error
        parts = error.parts
        run = transaction
      }
    }
  }
  // Committed: their dedupe keys are no longer needed. Deleted together every FORGET_MS rather than one command per
  // relay step, which each message's step paid beside the next request (if this fails, they lapse by themselves).
  let forgetting: string[] = []
  let forgetTimer: Timer | undefined
  const forgetNow = () => {
    clearTimeout(forgetTimer)
    forgetTimer = undefined
    const ids = forgetting
    forgetting = []
    return gatewayLog.forget(ids).catch(() => {})
  }
  const forgetLater = (ids: string[]) => {
    forgetting.push(...ids)
    forgetTimer ??= setTimeout(forgetNow, FORGET_MS)
  }
  /** Every partition that holds rows now, one after another (a partition's step waits for its relay elsewhere). */
  const relayAll = async () => {
    for (const part of await outboxPartitions()) while ((await relayStep([part], transaction)) === BATCH) {}
  }
  const traceRelay = (seq: number, eventId: string, selected: number) => {
    const appended = wallMs()
    const times = traced.get(eventId)
    traced.delete(eventId)
    if (times) {
      mark(seq, 'committing', times[0])
      mark(seq, 'committed', times[1] || selected)
    }
    mark(seq, 'selected', selected)
    mark(seq, 'appended', appended)
  }
  const loop = async () => {
    while (relayed < asked) {
      const upTo = asked
      try {
        await relayAll()
        if (failing) log.notice('gateway outbox: relaying again')
        failing = false
      } catch (error) {
        if (!failing) log.warn('gateway outbox: a relay failed; the rows wait', { error: String(error) })
        failing = true
      }
      relayed = upTo
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i].ticket <= relayed) waiting.splice(i, 1)[0].resolve()
    }
  }
  const start = () => {
    running ??= loop().finally(() => {
      running = undefined
      // Asked for between the loop's last look and now (a waiter it answered asks again at once): go on.
      if (relayed < asked) start()
    })
  }
  const relay = (): Promise<void> => {
    const ticket = ++asked
    const done = new Promise<void>((resolve) => waiting.push({ ticket, resolve }))
    start()
    return done
  }

  // The commits' relay steps: at most one per partition at a time on this node. A commit whose partitions have none
  // under way here starts one (right behind its COMMIT); one whose partitions have marks them asked, and the next step
  // of them takes everything asked meanwhile. So a hot partition's commits share steps (and its relay lock) rather than
  // each queueing a step of its own on the lock, holding a pool connection while it waits (16 cores, eight nodes, one
  // lobby: ~90 backends waited on Lock:advisory and the POSTs fell to a sixth), and a step held on one partition holds
  // no other partition's commits. A waiter is answered once each of its partitions had a step that began after it
  // asked: true when those steps took every row their partitions held.
  const busy = new Set<number>()
  const askedParts = new Set<number>()
  const begun = new Map<number, number>()
  const steps = new Set<Promise<void>>()
  type StepWaiter = {
    need: Map<number, number>
    complete: boolean
    items: Held[]
    resolve: (complete: boolean) => void
  }
  const stepWaiters = new Set<StepWaiter>()
  const waitStep = (parts: number[], items: Held[]) =>
    new Promise<boolean>((resolve) =>
      stepWaiters.add({
        need: new Map(parts.map((p) => [p, (begun.get(p) ?? 0) + 1])),
        complete: true,
        items,
        resolve,
      }),
    )
  /** Whether the step `g` of partition `p` is one `w` waits for (begun after it asked). */
  const awaited = (w: StepWaiter, p: number, g: number) => (w.need.get(p) ?? g + 1) <= g
  const covers = (w: StepWaiter, gens: Map<number, number>) => [...gens].some(([p, g]) => awaited(w, p, g))
  const covered = (gens: Map<number, number>, complete: boolean) => {
    for (const w of stepWaiters) {
      if (!covers(w, gens)) continue
      for (const [p, g] of gens) if (awaited(w, p, g)) w.need.delete(p)
      if (!complete) w.complete = false
      if (w.need.size === 0) {
        stepWaiters.delete(w)
        w.resolve(w.complete)
      }
    }
  }
  /** A step of `parts` (called synchronously up to `run`: behind a COMMIT, its take goes out with it). */
  const step = (parts: number[], run: Run) => {
    const gens = new Map<number, number>()
    for (const p of parts) {
      const g = (begun.get(p) ?? 0) + 1
      busy.add(p)
      begun.set(p, g)
      gens.set(p, g)
    }
    let settled = false
    const settle = (complete: boolean) => {
      if (settled) return
      settled = true
      covered(gens, complete)
    }
    const done = relayStep(parts, run, {
      // The rows come after the COMMITs' answers: a test's death (after COMMIT, before any relay) comes first.
      taken: () => dieIfAsked([...stepWaiters].filter((w) => covers(w, gens)).flatMap((w) => w.items)),
      appended: (rows) => settle(rows < BATCH),
    }).then(
      (n) => settle(n < BATCH),
      () => settle(false),
    )
    const tracked = done.finally(() => {
      steps.delete(tracked)
      for (const p of parts) busy.delete(p)
      nextStep()
    })
    steps.add(tracked)
  }
  /** A step of the partitions asked that have none under way. */
  const nextStep = () => {
    const free = [...askedParts].filter((p) => !busy.has(p)).sort((a, b) => a - b)
    if (free.length === 0) return
    for (const p of free) askedParts.delete(p)
    step(free, transaction)
  }
  const partsOf = (items: Held[]) => [...new Set(items.flatMap((i) => i.parts ?? []))].sort((a, b) => a - b)

  // A relay step behind a COMMIT (on PostgreSQL its take goes out with the COMMIT: db/pg/client.ts runOn) of the
  // partitions of the COMMIT's rows: it waits only for a relay of one of them elsewhere (which took rows committed
  // before this COMMIT of theirs), never for relays of other partitions. While relays fail, commits ask the relay loop.
  const holder: CommitHolder<Held, boolean> = {
    before(items) {
      if (tracing) for (const i of items) traced.set(i.eventId, [wallMs(), 0])
      // An entry without keys goes with the transaction's first partition (no order to keep: it adds no relay).
      const keyed = items.map((i) => [...new Set(keysOf(i.draft).map(partitionOf))].sort((a, b) => a - b))
      const home = keyed.find((parts) => parts.length > 0)?.[0] ?? partitionOf(items[0].eventId)
      items.forEach((i, n) => {
        i.parts = keyed[n].length ? keyed[n] : [home]
      })
      return insertOutbox(
        items.flatMap((i) => keysOf(i.draft)),
        items.map((i) => ({ eventId: i.eventId, entry: JSON.stringify(i.draft), parts: i.parts! })),
        clock.now(),
      )
    },
    // Resolves true once this COMMIT's rows are in the log (the step took every row its partitions held), false when
    // the relay loop must be asked: a step that took a full BATCH may have left them behind older ones (a backlog).
    // Only when no step of its partitions is under way here: its take then goes out with the COMMIT. Otherwise `after`
    // asks for the next step of them, once the COMMIT is answered (a step begun before that could miss the rows).
    behind(items, run) {
      const parts = partsOf(items)
      if (failing || parts.some((p) => busy.has(p))) return undefined
      const waited = waitStep(parts, items)
      step(parts, run)
      return waited
    },
    async after(items, behind) {
      if (tracing)
        for (const i of items) {
          const times = traced.get(i.eventId)
          if (times) times[1] = wallMs()
        }
      dieIfAsked(items)
      let stepped = behind
      if (!stepped && !failing) {
        const parts = partsOf(items)
        for (const p of parts) askedParts.add(p)
        stepped = waitStep(parts, items)
        nextStep()
      }
      const relayed = stepped ? stepped.then((appended) => (appended ? undefined : relay())) : relay()
      await Promise.race([relayed, Bun.sleep(RELAY_WAIT_MS)])
    },
  }

  let sweeping = false
  const sweeper = setInterval(async () => {
    if (sweeping) return
    sweeping = true
    try {
      const oldest = await oldestOutboxRow()
      if (oldest !== undefined && clock.now() - oldest >= orphanMs) await relay()
    } catch {
      // The database away: asked again at the next round.
    } finally {
      sweeping = false
    }
  }, sweepMs)
  sweeper.unref?.()

  // A transaction on SQLite (the cluster's parts tested on a SQLite server): no table, the append after its COMMIT.
  const appendAfter: CommitHolder<Held> = {
    after(items) {
      for (const { draft } of items)
        gatewayLog.appendNow(draft).catch((error: unknown) => {
          log.error('gateway log: an entry could not be appended (lost)', { kind: draft.kind, error: String(error) })
        })
    },
  }

  return {
    hold: (draft) => holdForCommit(inPostgresTransaction() ? holder : appendAfter, { eventId: randomUUID(), draft }),
    relay,
    async stop() {
      clearInterval(sweeper)
      await Promise.all(steps)
      await running
      await forgetNow()
    },
  }
}
