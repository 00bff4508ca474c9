// The Gateway's outbox (SCALE-OUT.md §4): what the bus is given inside a write's transaction is written to
// `gateway_outbox` in that same transaction, just before its COMMIT, and relayed to the log after it; so a node that
// dies between its COMMIT and its append loses no event: its rows wait in the table and another node relays them.
// A relay appends with the row's event id (log.ts: an id seen before appends nothing), so a row relayed twice (a relay
// that died before its COMMIT) reaches the sockets once; a relay that committed forgets its ids (no row of them is
// left to relay again).
//
// Order. For one topic (or one user's dispatches) the log holds the events in their transactions' commit order:
// - a transaction takes a lock per key of its entries (keysOf; transaction-long, sorted) before it inserts, so a second
//   transaction on a key gets its ids only after the first has committed: ids follow commit order per key;
// - a relay deletes the oldest rows by id, locked FOR UPDATE (not SKIP LOCKED), and appends them in id order before it
//   commits; a relay on another node that wants any of them waits until then and finds them gone. So relays
//   run one after another, each in id order, and a row is never appended before a row of its topic committed
//   earlier (whatever node committed it, and whichever node relays first after the COMMITs).
// Events of different topics from concurrent transactions have no order between them (they had none before either).
// A client's writes one after another keep their order: each answer waits for the relay of its events (up to
// RELAY_WAIT_MS: Redis away, the write still commits and its answer goes; the events wait in the table).
//
// The keys (keysOf). A dispatch's are its topics; a user-dispatch's, a close-user's and a close-grants' its user
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
// Redis away: writes commit, rows pile up; the sweeper (every node, every SWEEP_MS) relays once a row is older than
// ORPHAN_MS, in id order, when Redis is back; so does the next commit's relay.
import { randomUUID } from 'node:crypto'
import { clock } from '../core/clock'
import { log } from '../core/log'
import { type CommitHolder, holdForCommit, transaction } from '../db/client'
import type { Draft, GatewayLog } from './log'
import { inPostgresTransaction, insertOutbox, oldestOutboxRow, relayOutbox } from './store'
import { mark, tracing, wallMs } from './trace'

/** How long an answer waits for the relay of its events after COMMIT. */
const RELAY_WAIT_MS = 200
/** A row this old has lost its relay (its node died, or Redis was away): the sweeper relays it. */
export const ORPHAN_MS = 5000
const SWEEP_MS = 2000
/** Rows per relay step (one transaction). */
const BATCH = 500
/** How long relayed events' dedupe keys wait to be deleted together. */
const FORGET_MS = 100

type Held = { eventId: string; draft: Draft }
type Run = Parameters<NonNullable<CommitHolder<Held>['behind']>>[1]

/** The locks an entry takes (see the top): its topics, or its user. */
export function keysOf(draft: Draft): string[] {
  switch (draft.kind) {
    case 'dispatch':
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
   * One relay step in a transaction `run` runs: the oldest rows, appended in id order. `taken` is called when the rows
   * are there, `appended` once they are in the log (before the step's COMMIT, which only deletes them). Returns how
   * many rows it relayed.
   */
  const relayStep = async (run: Run, on?: { taken(): void; appended(rows: number): void }): Promise<number> => {
    let ids: string[] = []
    const n = await relayOutbox(
      BATCH,
      async (rows) => {
        on?.taken()
        ids = rows.map((r) => r.eventId)
        const selected = tracing ? wallMs() : 0
        await Promise.all(
          rows.map((r) => {
            const appended = gatewayLog.appendInOrder(r.eventId, JSON.parse(r.entry) as Draft)
            return tracing ? appended.then((seq) => traceRelay(seq, r.eventId, selected)) : appended
          }),
        )
        on?.appended(rows.length)
      },
      run,
    )
    if (n > 0) forgetLater(ids)
    return n
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
  const relayAll = async () => {
    while ((await relayStep(transaction)) === BATCH) {}
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

  // A relay step behind a COMMIT (on PostgreSQL its take goes out with the COMMIT: db/pg/client.ts runOn), one at a
  // time on this node: beside it, and while relays fail, commits ask the relay loop, which one pool connection runs.
  let behindRunning = false
  const holder: CommitHolder<Held, boolean> = {
    before(items) {
      if (tracing) for (const i of items) traced.set(i.eventId, [wallMs(), 0])
      return insertOutbox(
        items.flatMap((i) => keysOf(i.draft)),
        items.map((i) => ({ eventId: i.eventId, entry: JSON.stringify(i.draft) })),
        clock.now(),
      )
    },
    // Resolves true once this COMMIT's rows are in the log (the step took every row there was, or they were taken
    // by a relay that had ended), false when the relay loop must be asked: a step that took a full BATCH may have
    // left this COMMIT's rows behind older ones (a backlog, a batch of many writes).
    behind(items, run) {
      if (failing || behindRunning) return undefined
      behindRunning = true
      const { promise, resolve } = Promise.withResolvers<boolean>()
      // The rows come after the COMMIT's answer: a test's death (after COMMIT, before any relay) comes first.
      relayStep(run, { taken: () => dieIfAsked(items), appended: (rows) => resolve(rows < BATCH) })
        .then(
          (n) => resolve(n < BATCH),
          () => resolve(false),
        )
        .finally(() => {
          behindRunning = false
        })
      return promise
    },
    async after(items, behind) {
      if (tracing)
        for (const i of items) {
          const times = traced.get(i.eventId)
          if (times) times[1] = wallMs()
        }
      dieIfAsked(items)
      const relayed = behind ? behind.then((appended) => (appended ? undefined : relay())) : relay()
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
      await running
      await forgetNow()
    },
  }
}
