// A small typed event emitter (no dependency): a listener that throws does not stop the others, nor the SDK.

type Listener = (...args: any[]) => void

export class Emitter<Events extends { [K in keyof Events]: (...args: any[]) => void }> {
  private listeners = new Map<keyof Events, Set<Listener>>()

  /** Listen; returns a function that stops listening. */
  on<K extends keyof Events>(event: K, listener: Events[K]): () => void {
    let set = this.listeners.get(event)
    if (!set) this.listeners.set(event, (set = new Set()))
    set.add(listener)
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
    this.listeners.get(event)?.delete(listener)
  }

  protected emit<K extends keyof Events>(event: K, ...args: Parameters<Events[K]>): void {
    const set = this.listeners.get(event)
    if (!set) return
    for (const listener of [...set]) {
      try {
        listener(...args)
      } catch (error) {
        // A bug in an app's listener is the app's: reported, never thrown into the SDK's socket handling.
        queueMicrotask(() => {
          throw error
        })
      }
    }
  }

  protected removeAllListeners(): void {
    this.listeners.clear()
  }
}
