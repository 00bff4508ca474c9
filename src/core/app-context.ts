// The App context: everything one running service holds — its configuration, its database connections, its caches,
// its Gateway sessions and hooks, its limits, its metrics, its transports — lives in one AppContext, so two services
// can run in one process on two databases and share nothing (tests/core/two-apps.test.ts).
//
// A module declares what it holds with `perApp(init)` instead of a module-level variable; the accessor gives the
// current context's copy, made on first use. The current context is the root one — the process's service, which the
// server, the CLI and the tests use — unless the code runs inside `enter()` of another: server.ts listens for a service
// started in a context of its own so that every request and socket event enters it first (`enterHere`), and awaits
// and timers started there carry it. With no other
// context alive the accessor is one property read (no AsyncLocalStorage lookup on the hot paths).
//
// What stays per process, on purpose: immutable data loaded once (the country tables, library modules, compiled
// schemas, the built web pages), the log's output (one stderr), the snowflake generator (ids stay unique in the
// process), and the database dialect (db/client.ts dialectTables: every context of a process is on SQLite, or on
// PostgreSQL).
import { AsyncLocalStorage } from 'node:async_hooks'

export class AppContext {
  /** What each perApp() declaration holds for this context, by its slot. */
  readonly slots: unknown[] = []
  private closed = false

  constructor(
    /** For log lines and errors: which service this is. */
    readonly name: string,
    readonly root = false,
  ) {}

  /** Run fn (and everything it starts: awaits, timers set inside it) with this context current. */
  enter<T>(fn: () => T): T {
    if (this.root && scope.getStore() === undefined) return fn()
    return scope.run(this, fn)
  }

  /**
   * This context current for the rest of a callback Bun starts with none (a request, a socket's event): the first
   * step of each entry point of a service in a context of its own. Nothing to do for the root.
   */
  enterHere(): void {
    if (!this.root) scope.enterWith(this)
  }

  /** The service stopped: the root is again alone (no lookup on the hot paths). */
  close(): void {
    if (this.root || this.closed) return
    this.closed = true
    others -= 1
  }

  get isClosed(): boolean {
    return this.closed
  }
}

const scope = new AsyncLocalStorage<AppContext>()
const root = new AppContext('root', true)
/** How many contexts besides the root are alive: while none, the root is current without a lookup. */
let others = 0
let slotCount = 0

/** A context of its own for a second service in this process (tests/core/two-apps.test.ts). */
export function newAppContext(name: string): AppContext {
  others += 1
  return new AppContext(name)
}

/** The context this code runs in: the one entered, else the root. */
export function currentApp(): AppContext {
  if (others === 0) return root
  // A stopped service's late work (a request's after-response hook) still finds its own state.
  return scope.getStore() ?? root
}

/** The root context: the process's own service. */
export const rootApp = (): AppContext => root

/**
 * What a module holds per service: `const state = perApp(() => ({ sessions: new Map() }))`, then `state().sessions`.
 * Each context gets its own, made by `init` on first use.
 */
export function perApp<T>(init: () => T): () => T {
  const slot = slotCount++
  return () => {
    const slots = currentApp().slots
    const held = slots[slot]
    if (held !== undefined) return held as T
    const made = init()
    slots[slot] = made
    return made
  }
}
