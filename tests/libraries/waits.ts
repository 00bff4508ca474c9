// Waiting on a library's callbacks and state, with an error that names what did not come.

/** The promise, or an error naming what did not come within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: Timer | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what()} within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

/** What `find` returns once it returns something, polled every 10 ms for up to `ms`. */
export async function until<T>(find: () => T | undefined, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const found = find()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`no ${what} within ${ms} ms`)
    await Bun.sleep(10)
  }
}
