// What a transaction holds for its COMMIT (the Gateway's dispatches): held by the write scope, run before the COMMIT,
// behind it (PostgreSQL) and after it; dropped with a rolled-back savepoint.
import { log } from '../core/log'
import { type WriteScope, scopes, writeScope } from './scope'
import type { DB } from './state'

/**
 * What a transaction holds for its COMMIT, by whoever gave it (the Gateway's dispatches): `before` runs inside the
 * transaction just before COMMIT with the items still held (those of a rolled-back savepoint are dropped), `after`
 * once it committed (after its scope ended); neither runs when it rolls back.
 *
 * `before` sends its statements before its first await: on PostgreSQL they go out with the COMMIT, in one round trip
 * (a statement that fails makes PostgreSQL answer the COMMIT with ROLLBACK, and the transaction throws its error).
 * `behind` (PostgreSQL only), if given, runs one transaction of the holder's with `run`, called before its first
 * await: on the committing connection, its first statements sent right behind the COMMIT, before its answer (so it
 * runs whether or not the COMMIT succeeded). `after` gets what it gave; on SQLite it is not run (undefined).
 */
export type CommitHolder<T, B = unknown> = {
  before?(items: T[]): void | Promise<void>
  behind?(items: T[], run: <R>(fn: (tx: DB) => Promise<R>) => Promise<R>): Promise<B> | undefined
  after(items: T[], behind: Promise<B> | undefined): void | Promise<void>
}

/** Hold `item` for the COMMIT of the transaction this context is in; false outside one (the caller acts now). */
export function holdForCommit<T, B>(holder: CommitHolder<T, B>, item: T): boolean {
  const held = writeScope()?.held
  if (!held) return false
  held.push({ holder: holder as unknown as CommitHolder<unknown>, item })
  return true
}

/**
 * A write whose answer the caller does not need (no rows, no count). Inside a transaction on PostgreSQL it is sent and
 * not awaited: it goes out with what follows, and the COMMIT (or its savepoint's end) waits for its answer and throws
 * its error. Elsewhere it is awaited (on SQLite it has already run).
 */
export async function sendWithCommit(statement: unknown): Promise<void> {
  const sent = writeScope()?.sent
  if (sent === undefined || !(statement instanceof Promise)) {
    await statement
    return
  }
  statement.catch(() => {})
  sent.push(statement)
}

/** Where a savepoint begins in what its transaction holds (rolling back to it drops what came after). */
export const heldMark = (scope: WriteScope): number => scope.held?.length ?? 0
export function dropHeldSince(scope: WriteScope, mark: number): void {
  if (scope.held && scope.held.length > mark) scope.held.length = mark
}

/** The held items by holder, in the order each holder first held one. */
function heldByHolder(scope: WriteScope): Map<CommitHolder<unknown>, unknown[]> | undefined {
  if (!scope.held?.length) return undefined
  const by = new Map<CommitHolder<unknown>, unknown[]>()
  for (const { holder, item } of scope.held) {
    const items = by.get(holder)
    if (items) items.push(item)
    else by.set(holder, [item])
  }
  return by
}

/**
 * A transaction's work is done: its atCommit hooks, then each holder's `before` (beforeCommit), in the scope. Undefined
 * when nothing is held.
 */
export function readyToCommit(scope: WriteScope): Promise<void> | undefined {
  // Most transactions have neither (one server: dispatches are held for after the COMMIT only): no scope to enter.
  if (scope.atCommit === undefined && !scope.held?.some((h) => h.holder.before !== undefined)) return undefined
  return scopes.run(scope, () => {
    for (const hook of scope.atCommit ?? []) hook()
    return beforeCommit(scope)
  })
}

/**
 * Inside the transaction, just before COMMIT: each holder's `before`, all of them called before any is awaited (their
 * statements go out together). Undefined when nothing is held.
 */
export function beforeCommit(scope: WriteScope): Promise<void> | undefined {
  // One server holds dispatches for after the COMMIT only: nothing to run (and no await) before it.
  if (!scope.held?.some((h) => h.holder.before !== undefined)) return undefined
  const by = heldByHolder(scope)
  if (!by) return undefined
  return Promise.all([...by].map(([holder, items]) => holder.before?.(items))).then(() => undefined)
}

type Behind = NonNullable<CommitHolder<unknown>['behind']>
/** What the holders' `behind` transactions gave, by holder (the PostgreSQL backend starts them behind its COMMIT). */
export type BehindResults = Map<CommitHolder<unknown>, Promise<unknown> | undefined>

/**
 * Right behind the COMMIT (PostgreSQL): each holder's `behind`; the first one's transaction runs with `first` (on the
 * committing connection), any other's with `others` (a transaction of its own). Undefined when no holder has one.
 */
export function startBehind(
  scope: WriteScope,
  first: Parameters<Behind>[1],
  others: Parameters<Behind>[1],
): BehindResults | undefined {
  if (!scope.held?.some((h) => h.holder.behind !== undefined)) return undefined
  const results: BehindResults = new Map()
  let run: Parameters<Behind>[1] | undefined = first
  for (const [holder, items] of heldByHolder(scope) ?? []) {
    if (!holder.behind) continue
    const promise = holder.behind(items, run ?? others)
    promise?.catch(() => {})
    results.set(holder, promise)
    run = undefined
  }
  return results
}

/**
 * Once committed: each holder's `after` (with what its `behind` gave, which the PostgreSQL backend started behind
 * its COMMIT); what fails is logged (the write stands). Undefined when nothing is held.
 */
export function afterCommit(scope: WriteScope, behind?: BehindResults): Promise<void> | undefined {
  const by = heldByHolder(scope)
  scope.held = undefined
  if (!by) return undefined
  const waits: Promise<void>[] = []
  for (const [holder, items] of by) {
    try {
      const done = holder.after(items, behind?.get(holder))
      if (done instanceof Promise) waits.push(done)
    } catch (error) {
      log.error('work after a commit failed', { error: String(error) })
    }
  }
  if (waits.length === 0) return undefined
  return Promise.all(waits).then(
    () => undefined,
    (error) => log.error('work after a commit failed', { error: String(error) }),
  )
}
