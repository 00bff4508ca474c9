// Read-through caches of the rows nearly every request reads (a lobby and its members, a user, whether MFA is on).
// Outside a transaction each SQLite statement takes and drops the WAL read lock (three system calls, ~4 µs) before
// it reads anything; a hit here is one Map lookup.
//
// Kept correct by the store that owns the rows: every store function that writes a cached row forgets its key in
// the write's own step, inside its write scope (db/client.ts: a transaction, a batch, a `write`; a bulk write empties
// the cache), so the next read after a write goes to the database. Write transactions span awaits, so:
// - inside a write scope, a key it forgot is read from the database (its own, uncommitted row) and never kept;
// - meanwhile other requests read the committed row from a read connection and may keep it: when the scope ends
//   (committed or rolled back) every key it forgot is forgotten again;
// - a read in a `reading()` snapshot begun before such an end is not kept (it may show the rows replaced).
// So a cache never holds an uncommitted row, nor, once a write is answered, the row it replaced. Commits by another
// process (the CLI) are seen through SQLite's data_version, looked at once per millisecond, which empties every cache.
// Cached values are shared between requests: callers treat them as read-only.
// Each service (core/app.ts) has caches of its own: a RowCache is declared once per module, its entries are the
// current App's (AppState.caches).
import { type App, appState, currentApp } from '../core/app'
import { Lru } from '../core/lru'
import { dataVersion, databaseEpoch, inWriteTransaction, readsAreCurrent, writeScope, type WriteScope } from './client'

/** Every cache declared (the declarations are per process; what they hold is per service). */
const caches: RowCache<unknown, unknown>[] = []

/** What the service's caches know of its database. */
const newCaches = () => ({
  /** The database opening the cached rows come from: another one opened (tests, restore) starts every cache empty. */
  epoch: -1,
  version: undefined as number | undefined,
  checkedAt: 0,
  foreignCommits: 0,
  /** What else to drop when another process commits: the token cache (core/caller.ts), wired by app.ts. */
  alsoForget: undefined as (() => void) | undefined,
  /** Several nodes: a write scope's forgetting is told to every node (cluster/node.ts), by cache name and keys. */
  shared: undefined as ((cache: string, keys: string[] | null) => void) | undefined,
  /** What each RowCache holds in this App. */
  rows: new Map<RowCache<unknown, unknown>, Held<unknown, unknown>>(),
  /** What each PageCache has kept in this App. */
  pages: new Map<PageCache, { chars: number }>(),
})
declare module '../core/app' {
  interface AppState {
    caches: ReturnType<typeof newCaches>
  }
}
const seen = appState('caches', newCaches)

/** How many times checkForeignCommits found another process's commit (the Gateway then re-checks credentials). */
export function foreignCommitsSeen(): number {
  return seen().foreignCommits
}

/** What else to drop when another process commits: the token cache (core/caller.ts), wired by app.ts. */
export function alsoForgetOnForeignCommit(fn: (() => void) | undefined): void {
  seen().alsoForget = fn
}

/**
 * Empty every cache when another process committed since the last look. Looked at once per real millisecond (a
 * statement each time cost ~10 % of a cached request): another process's commit is seen by every request that
 * starts a millisecond or more after it. Row caches ask it on every read, the token cache before every lookup.
 */
export function checkForeignCommits(): void {
  const s = seen()
  const epoch = databaseEpoch()
  if (epoch !== s.epoch) {
    s.epoch = epoch
    clearRowCaches()
  }
  const now = Date.now()
  if (now === s.checkedAt) return
  s.checkedAt = now
  let version: number
  try {
    version = dataVersion()
  } catch {
    return // no database open: nothing can be cached either
  }
  if (version !== s.version) {
    s.version = version
    s.foreignCommits += 1
    for (const c of caches) c.reset()
    s.alsoForget?.()
  }
}

/** A bound on what a cache holds besides its entry count: each value's weight (members, characters) and a total. */
export type Budget<V> = { weigh: (value: V) => number; total: number }

/**
 * Run `forget` (a cache's clear outside this file: the token cache) now, and again when the write scope open in this
 * context ends: what another request cached meanwhile from a read connection may be what the write replaces.
 */
export function forgetThrough(forget: () => void): void {
  forget()
  const scope = writeScope()
  if (scope) (scope.ends ??= []).push(forget)
}

const byName = new Map<string, RowCache<unknown, unknown>>()

export function shareInvalidations(tell: ((cache: string, keys: string[] | null) => void) | undefined): void {
  seen().shared = tell
}

/** Another node's committed write forgot these keys of a cache (null: all of it): forget them here too. */
export function invalidateHere(cache: string, keys: string[] | null): void {
  const target = byName.get(cache)
  if (!target) return // a cache this version does not have
  if (keys === null) target.drop()
  else target.forgetHere(keys)
}

/** What one cache holds in one service. */
type Held<K, V> = {
  lru: Lru<K, V>
  /** The weight added since the cache was last emptied (what was dropped meanwhile still counts: an upper bound). */
  weight: number
  /** Moves whenever a key is forgotten or the cache emptied (a writer's step, a write scope's end). */
  version: number
  /**
   * Loads under way (PostgreSQL's reads await), by key: a read that misses while one runs shares it rather than send
   * the same statement again (a lobby forgotten by a batch's commit is read once, not by each request under way).
   * Forgetting a key forgets its load too: a read after a write never shares a load begun before it.
   */
  loading: Map<K, Promise<V | undefined>>
}

export class RowCache<K, V> {
  /** The App this cache last served, and what it holds there: with one App, held() is a comparison. */
  private lastApp: App | undefined
  private lastHeld: Held<K, V> | undefined

  constructor(
    /** Its name in other nodes' invalidations. */
    readonly name: string,
    private readonly max: number,
    private readonly budget?: Budget<V>,
  ) {}

  /** What this cache holds in the current App (its entry in AppState.caches.rows), made on first use. */
  private held(): Held<K, V> {
    const app = currentApp()
    if (app === this.lastApp) return this.lastHeld!
    const rows = seen().rows as unknown as Map<RowCache<K, V>, Held<K, V>>
    let held = rows.get(this)
    if (!held) rows.set(this, (held = { lru: new Lru<K, V>(this.max), weight: 0, version: 0, loading: new Map() }))
    this.lastApp = app
    this.lastHeld = held
    return held
  }

  /** Moves whenever a key is forgotten or the cache emptied (a writer's step, a write scope's end). */
  get version(): number {
    return this.held().version
  }

  /** Forget keys without a scope's bookkeeping (another node's committed write). */
  forgetHere(keys: K[]): void {
    const h = this.held()
    for (const key of keys) {
      h.lru.delete(key)
      h.loading.delete(key)
    }
    h.version++
  }

  /**
   * The cached value, else `load()`'s, kept unless it is undefined, was read inside a write scope that wrote it (it
   * may still roll back: the scope reads it from the database each time), or was read in a snapshot older than the
   * last write that forgot cached rows.
   */
  read(key: K, load: () => V | undefined): V | undefined
  read(key: K, load: () => Promise<V | undefined>): V | undefined | Promise<V | undefined>
  read(key: K, load: () => V | undefined | Promise<V | undefined>): V | undefined | Promise<V | undefined> {
    checkForeignCommits()
    const scope = writeScope()
    // A transaction on PostgreSQL that took a lock reads the database, not the cache: the commit it waited for may not
    // have reached the caches yet.
    if (scope !== undefined && (scope.locked === true || this.wroteIn(scope, key))) return load()
    const h = this.held()
    const hit = h.lru.get(key)
    if (hit !== undefined) return hit
    const shared = h.loading.get(key)
    if (shared !== undefined && readsAreCurrent()) return shared
    const value = load()
    if (!(value instanceof Promise)) {
      if (value !== undefined && (scope !== undefined || readsAreCurrent())) this.keep(key, value)
      return value
    }
    const kept = this.keepLater(key, value, scope)
    if (!readsAreCurrent()) return kept
    h.loading.set(key, kept)
    const done = () => {
      if (h.loading.get(key) === kept) h.loading.delete(key)
    }
    kept.then(done, done)
    return kept
  }

  /**
   * A row read by a statement that awaits (every read on PostgreSQL, a load that awaits on SQLite): kept only when no
   * key of this cache was forgotten meanwhile (a commit may have ended while it read: the row may be the one replaced).
   */
  private async keepLater(key: K, loading: Promise<V | undefined>, scope: WriteScope | undefined) {
    const before = this.version
    const value = await loading
    if (value !== undefined && this.version === before && (scope !== undefined || readsAreCurrent()))
      this.keep(key, value)
    return value
  }

  /** The cached value, if any (nothing is loaded). */
  peek(key: K): V | undefined {
    return this.held().lru.get(key)
  }

  /** Call before writing the key's row, inside the write's scope. */
  forget(key: K): void {
    const h = this.held()
    h.lru.delete(key)
    h.loading.delete(key)
    h.version++
    const scope = writeScope()
    if (scope) this.mark(scope, key)
  }

  /** Call before a write that may touch any key. */
  clear(): void {
    this.drop()
    const scope = writeScope()
    if (scope) this.mark(scope, undefined)
  }

  /** Drop everything, outside any scope's bookkeeping (another process committed, another database). */
  reset(): void {
    this.drop()
  }

  /** Drop every entry (never wrong: what is not cached is read). */
  drop(): void {
    const h = this.held()
    h.lru.clear()
    h.loading.clear()
    h.weight = 0
    h.version++
  }

  private wroteIn(scope: WriteScope, key: K): boolean {
    const marks = scope.marks?.get(this) as Set<K> | true | undefined
    return marks === true || (marks !== undefined && marks.has(key))
  }

  /** Remember in the scope that it wrote `key` (undefined: any key), and forget it again when the scope ends. */
  private mark(scope: WriteScope, key: K | undefined): void {
    const all = (scope.marks ??= new Map())
    const marks = all.get(this) as Set<K> | true | undefined
    if (marks === true) return
    if (marks === undefined) {
      ;(scope.ends ??= []).push(() => this.ended(scope))
      // Several nodes, a transaction: the other nodes are told with its COMMIT (an entry of its outbox, relayed with
      // its events), not after it: nothing is lost if this node dies between the two, and no entry of its own.
      if (seen().shared && scope.held) (scope.atCommit ??= []).push(() => this.tell(scope))
    }
    if (key === undefined) all.set(this, true)
    else if (marks === undefined) all.set(this, new Set([key]))
    else marks.add(key)
  }

  private ended(scope: WriteScope): void {
    const marks = scope.marks!.get(this) as Set<K> | true
    if (marks === true) this.drop()
    else this.forgetHere([...marks])
    // Told with its COMMIT, unless it forgot more after its atCommit ran (a key a statement's answer named, which
    // arrives with the COMMIT's): told now, after it.
    if (this.told.get(scope) !== toldSize(marks)) this.tell(scope)
  }

  /** The scopes whose forgetting was told with their COMMIT (tell, from atCommit), and how much of it. */
  private readonly told = new WeakMap<WriteScope, number>()

  /** Tell the other nodes what this scope forgot (inside a transaction: held for its COMMIT). */
  private tell(scope: WriteScope): void {
    const marks = scope.marks!.get(this) as Set<K> | true
    if (scope.open) this.told.set(scope, toldSize(marks))
    seen().shared?.(this.name, marks === true ? null : ([...marks] as string[]))
  }

  private keep(key: K, value: V): void {
    const h = this.held()
    if (this.budget) {
      // A value too big for the budget is read each time; past the budget the cache starts over empty.
      const weight = this.budget.weigh(value)
      if (weight > this.budget.total / 8) return
      h.weight += weight
      if (h.weight > this.budget.total) {
        this.drop()
        h.weight = weight
      }
    }
    h.lru.set(key, value)
  }
}

/** How much of a scope's forgetting a tell named: its keys, or -1 for all of them. */
const toldSize = (marks: Set<unknown> | true): number => (marks === true ? -1 : marks.size)

/** A cache registered for the foreign-commit check; `max` entries at most, and within `budget` when given. */
export function rowCache<K extends string, V>(name: string, max: number, budget?: Budget<V>): RowCache<K, V> {
  if (byName.has(name)) throw new Error(`two row caches are named ${name}`)
  const cache = new RowCache<K, V>(name, max, budget)
  caches.push(cache as RowCache<unknown, unknown>)
  byName.set(name, cache as RowCache<unknown, unknown>)
  return cache
}

/**
 * JSON text of answers made of many rows (pages of messages), per owner (a channel, a lobby) and query, at most
 * `perOwner` queries each and `chars` characters in all (a page of 200 long messages is ~1 MB: entry counts alone
 * would let a client who asks many cursors hold gigabytes). `forget(owner)` when any of its rows is written; an
 * answer also holds the `version` of the other rows it shows (its authors, usersVersion) and is made again when that
 * moved.
 */
export class PageCache {
  private readonly owners: RowCache<string, Map<string, { text: string; version: number }>>
  /** Characters kept since the cache was last emptied (an upper bound), per service. */
  private kept(): { chars: number } {
    const pages = seen().pages
    let kept = pages.get(this)
    if (!kept) pages.set(this, (kept = { chars: 0 }))
    return kept
  }

  constructor(
    name: string,
    owners: number,
    private readonly perOwner: number,
    private readonly chars: number,
  ) {
    this.owners = rowCache(name, owners)
  }

  /**
   * The page's text, else `build()`'s, kept when it was made outside a write scope and no page of this cache was
   * forgotten while it was made. `version` is the version of the other rows it shows (its authors), read before.
   */
  async read(owner: string, query: string, version: number, build: () => string | Promise<string>): Promise<string> {
    const pages = this.owners.read(owner, () => new Map())!
    const hit = pages.get(query)
    if (hit && hit.version === version) return hit.text
    const before = this.owners.version
    const text = await build()
    // Read inside a write scope: not kept (whether or not it wrote these rows, the map may not be cached).
    if (
      this.owners.version === before &&
      !inWriteTransaction() &&
      readsAreCurrent() &&
      text.length <= this.chars / 16
    ) {
      const kept = this.kept()
      kept.chars += text.length
      if (kept.chars > this.chars) {
        this.owners.drop()
        kept.chars = 0
        return text
      }
      if (pages.size >= this.perOwner && !pages.has(query)) pages.delete(pages.keys().next().value!)
      pages.set(query, { text, version })
    }
    return text
  }

  forget(owner: string): void {
    this.owners.forget(owner)
  }

  clear(): void {
    this.owners.clear()
    this.kept().chars = 0
  }
}

/** Empty every cache (tests that write around the stores). */
export function clearRowCaches(): void {
  for (const c of caches) c.reset()
  seen().version = undefined
}
