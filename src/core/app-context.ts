// The old names of core/app.ts, kept while the last modules move to `appState` (their state declared in AppState).
import { type App, currentApp, newApp } from './app'

export { currentApp, rootApp } from './app'
/** @deprecated the App (core/app.ts). */
export type AppContext = App
/** @deprecated newApp (core/app.ts). */
export const newAppContext = (name: string): App => newApp(name)

let slotCount = 0

/**
 * @deprecated declare what the module holds in AppState and reach it with `appState(key, init)` (core/app.ts): typed
 * on the App, where this slot is not. Each App gets its own, made by `init` on first use.
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
