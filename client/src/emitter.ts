// A small typed event emitter (no dependency): a listener that throws does not stop the others, nor the SDK.
// Listener lists are replaced, never changed in place, so an emit walks its list without copying it (the Gateway
// emits for every frame).

type Listener = (...args: any[]) => void

export class Emitter<Events extends { [K in keyof Events]: (...args: any[]) => void }> {
  private listeners = new Map<keyof Events, Listener[]>()

  /** Listen; returns a function that stops listening. */
  on<K extends keyof Events>(event: K, listener: Events[K]): () => void {
    this.listeners.set(event, [...(this.listeners.get(event) ?? []), listener])
    return () => this.off(event, listener)
  }

  once<K extends keyof Events>(event: K, listener: Events[K]): () => void {
    const off = this.on(event, ((...args: unknown[]) => {
      off()
      ;(listener as Listener)(...args)
    }) as Events[K])
    return off
  }

  off<K extends keyof Events>(event: K, listener: Events[K]): void {
    const list = this.listeners.get(event)
    if (!list) return
    const rest = list.filter((l) => l !== listener)
    if (rest.length) this.listeners.set(event, rest)
    else this.listeners.delete(event)
  }

  protected emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void {
    const list = this.listeners.get(event)
    if (!list) return
    for (const listener of list) {
      try {
        listener(...args)
      } catch (error) {
        // A bug in an app's listener is the app's: reported (as the browser reports an uncaught error), never thrown
        // into the SDK's socket handling, and never a crash of a Node game.
        const report = (globalThis as { reportError?: (e: unknown) => void }).reportError
        if (typeof report === 'function') report(error)
        else console.error(error)
      }
    }
  }

  protected removeAllListeners(): void {
    this.listeners.clear()
  }
}
