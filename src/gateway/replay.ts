// One global, increasing dispatch sequence and a bounded buffer of recent dispatches for Resume.
// A single sequence lets Bun's native publish send identical bytes to every subscriber while each connection
// still sees `s` increase; a resuming session replays the buffered dispatches of its topics after its last `s`.

export type Buffered = { seq: number; topics: string[]; payload: string }

const CAPACITY = 20_000

let seq = 0
const ring: Buffered[] = []
let head = 0 // index of the oldest entry once the ring is full

export function nextSeq(): number {
  seq += 1
  return seq
}

export function currentSeq(): number {
  return seq
}

export function remember(entry: Buffered): void {
  if (ring.length < CAPACITY) ring.push(entry)
  else {
    ring[head] = entry
    head = (head + 1) % CAPACITY
  }
}

/** Dispatches after `afterSeq` on any of `topics`, oldest first; null when the buffer no longer reaches back that far. */
export function replaySince(afterSeq: number, topics: ReadonlySet<string>): Buffered[] | null {
  const full = ring.length === CAPACITY
  const ordered = full ? [...ring.slice(head), ...ring.slice(0, head)] : ring
  // Once entries have been dropped, a session asking from before the oldest one may have missed some.
  if (full && afterSeq < ordered[0].seq - 1) return null
  return ordered.filter((e) => e.seq > afterSeq && e.topics.some((t) => topics.has(t)))
}

/** The last dispatch sequence any of `topics` received, or `floor` when none after it is buffered. */
export function lastSeqFor(topics: ReadonlySet<string>, floor: number): number {
  const full = ring.length === CAPACITY
  for (let i = ring.length - 1; i >= 0; i--) {
    const entry = ring[full ? (head + i) % CAPACITY : i]
    if (entry.seq <= floor) break
    if (entry.topics.some((t) => topics.has(t))) return entry.seq
  }
  return floor
}
