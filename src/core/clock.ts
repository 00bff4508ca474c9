// Every expiry reads clock.now(); tests move it forward instead of sleeping.
let offsetMs = 0

export const clock = {
  now: (): number => Date.now() + offsetMs,
  date: (): Date => new Date(Date.now() + offsetMs),
  seconds: (): number => Math.floor((Date.now() + offsetMs) / 1000),
  advance(ms: number): void {
    offsetMs += ms
  },
  reset(): void {
    offsetMs = 0
  },
}
