// The App: everything one running service holds — its configuration, its database and pool, its bus, caches,
// limits, transports, metrics, Gateway sessions and hooks — is one typed value, so two services can run in one
// process on two databases and share nothing (tests/core/two-apps.test.ts).
//
// What a module holds per app is declared where the module is, and added to the App's type there by declaration
// merging (no upward import: core/ knows no module), then reached through its accessor:
//
//   const newIdle = () => ({ timers: new Map<string, Timer>() })
//   declare module '../core/app' {
//     interface AppState {
//       lobbyIdle: ReturnType<typeof newIdle>
//     }
//   }
//   const idle = appState('lobbyIdle', newIdle)   // idle().timers: the current app's, made on first use
//
// so `app.state.lobbyIdle` is typed and go-to-definition lands on that declaration. server.ts `createApp(config)`
// builds a service's App and wires it.
//
// The current App is the root one — the process's service, which the server, the CLI and the tests use — unless the
// code runs inside `enter()` of another: server.ts listens for a service started in an App of its own so that every
// request and socket event enters it first (`enterHere`), and awaits and timers started there carry it. With no other
// App alive no AsyncLocalStorage lookup is made on the hot paths.
//
// What stays per process, on purpose: immutable data loaded once (the country tables, library modules, compiled
// schemas, the built web pages), the log's output (one stderr), the snowflake generator (ids stay unique in the
// process), and the database dialect (db/dialect-tables.ts: every App of a process is on SQLite, or on
// PostgreSQL).
import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * What an App holds, one field per module that holds something: each module adds its own with
 * `declare module '<path to>/core/app' { interface AppState { name: Type } }` next to its `appState('name', init)`.
 */
export interface AppState {}

export class App {
  /** What each module holds for this App (appState), made on first use. */
  readonly state: Partial<AppState> = {}
  private closed = false

  constructor(
    /** For log lines and errors: which service this is. */
    readonly name: string,
    readonly root = false,
  ) {}

  /** Run fn (and everything it starts: awaits, timers set inside it) with this App current. */
  enter<T>(fn: () => T): T {
    if (this.root && scope.getStore() === undefined) return fn()
    return scope.run(this, fn)
  }

  /**
   * This App current for the rest of a callback Bun starts with none (a request, a socket's event): the first step
   * of each entry point of a service in an App of its own. Nothing to do for the root.
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

const scope = new AsyncLocalStorage<App>()
const root = new App('root', true)
/** How many Apps besides the root are alive: while none, the root is current without a lookup. */
let others = 0

/** An App of its own for a second service in this process (server.ts createApp, tests/core/two-apps.test.ts). */
export function newApp(name: string): App {
  others += 1
  return new App(name)
}

/** The App this code runs in: the one entered, else the root. */
export function currentApp(): App {
  if (others === 0) return root
  // A stopped service's late work (a request's after-response hook) still finds its own state.
  return scope.getStore() ?? root
}

/** The root App: the process's own service. */
export const rootApp = (): App => root

/**
 * The accessor of what a module holds per App, declared in AppState under `key` (see the top of this file): the
 * current App's value, made by `init` on first use. It remembers the last App it served, so with one App it costs a
 * comparison (the hot paths call it on every request); the value lives in `app.state[key]`.
 */
export function appState<K extends keyof AppState>(key: K, init: () => AppState[K]): () => AppState[K] {
  let lastApp: App | undefined
  let lastValue: AppState[K] | undefined
  return () => {
    const app = currentApp()
    if (app === lastApp) return lastValue as AppState[K]
    const state = app.state
    let value = state[key]
    if (value === undefined) state[key] = value = init()
    lastApp = app
    lastValue = value
    return value as AppState[K]
  }
}
