// One global, increasing dispatch sequence and a buffer of recent dispatches for Resume, bounded in bytes.
// A single sequence lets Bun's native publish send identical bytes to every subscriber while each connection
// still sees `s` increase; a resuming session replays the buffered dispatches of its topics after its last `s`.
// The bound is on what the entries hold, not their number: one lobby event can carry a thousand members' metadata
// (~1 MB), so a count bound alone could keep gigabytes. Past the bound the oldest entries go first; a Resume from
// before the oldest one kept gets op 9 (not resumable), as Discord answers a session it no longer has.

import { appState } from '../core/app'

export type Buffered = { seq: number; topics: string[]; payload: string }

/** What an entry costs besides its payload's characters: the object, its topic list, the array slot. */
const ENTRY_OVERHEAD = 96

/** What this module holds per App (core/app.ts). */
const newGatewayReplay = () => ({
  seq: 0,
  limitBytes: 64 * 1024 * 1024,
  ring: [] as Buffered[],
  head: 0, // index of the oldest entry kept; entries before it are dropped and compacted away now and then
  bytes: 0,
  /** The sequence of the newest entry dropped to keep the bound (0: none yet). */
  droppedThrough: 0,
})
declare module '../core/app' {
  interface AppState {
    gatewayReplay: ReturnType<typeof newGatewayReplay>
  }
}
const held = appState('gatewayReplay', newGatewayReplay)

const cost = (entry: Buffered) => entry.payload.length + ENTRY_OVERHEAD + entry.topics.length * 16

/** The bound in bytes (the GATEWAY_REPLAY_BYTES setting); entries over it go at once. */
export function setReplayLimit(next: number): void {
  held().limitBytes = next
  trim()
}

export function nextSeq(): number {
  const st = held()
  st.seq += 1
  return st.seq
}

/** With several nodes the cluster's log hands out the sequence: the last one this node applied. */
export function advanceSeq(applied: number): void {
  const st = held()
  if (applied > st.seq) st.seq = applied
}

export function currentSeq(): number {
  return held().seq
}

export function remember(entry: Buffered): void {
  const st = held()
  st.ring.push(entry)
  st.bytes += cost(entry)
  trim()
}

function trim(): void {
  const st = held()
  while (st.bytes > st.limitBytes && st.head < st.ring.length) {
    const oldest = st.ring[st.head]
    st.bytes -= cost(oldest)
    st.droppedThrough = oldest.seq
    st.ring[st.head] = undefined as unknown as Buffered
    st.head += 1
  }
  // Compact once the dropped prefix is as long as what is kept (amortized O(1) per entry).
  if (st.head > 1024 && st.head * 2 > st.ring.length) {
    st.ring.splice(0, st.head)
    st.head = 0
  }
}

/** Dispatches after `afterSeq` on any of `topics`, oldest first; null when the buffer no longer reaches back that far. */
export function replaySince(afterSeq: number, topics: ReadonlySet<string>): Buffered[] | null {
  const st = held()
  // Once entries have been dropped, a session asking from before the newest dropped one may have missed some.
  if (afterSeq < st.droppedThrough) return null
  const out: Buffered[] = []
  for (let i = st.head; i < st.ring.length; i++) {
    const e = st.ring[i]
    if (e.seq > afterSeq && e.topics.some((t) => topics.has(t))) out.push(e)
  }
  return out
}

/** The last dispatch sequence any of `topics` received, or `floor` when none after it is buffered. */
export function lastSeqFor(topics: ReadonlySet<string>, floor: number): number {
  const st = held()
  for (let i = st.ring.length - 1; i >= st.head; i--) {
    const entry = st.ring[i]
    if (entry.seq <= floor) break
    if (entry.topics.some((t) => topics.has(t))) return entry.seq
  }
  return floor
}

/** What the buffer holds: entries and their bytes (for /metrics). */
export function replayStats(): { entries: number; bytes: number } {
  const st = held()
  return { entries: st.ring.length - st.head, bytes: st.bytes }
}
