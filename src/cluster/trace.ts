// Where a cross-node dispatch spends its time, for `BENCH_TRACE=1 bun bench/cluster.ts` (never set in production):
// with LOBBY_FANOUT_TRACE=<file>, a node notes the moments each log entry passes (its COMMIT, the relay's rows, the
// append's answer, this node's read and publish) as lines `<seq> <hop> <ms>` in that file, and the bench joins them
// with what its sockets saw. Off (the variable unset), each hop costs one test of a constant.
import { appendFileSync } from 'node:fs'

const file = process.env.LOBBY_FANOUT_TRACE || undefined

/** Whether this node notes its hops. */
export const tracing = file !== undefined

/** Wall-clock milliseconds with microseconds: comparable between the processes of one machine (the bench's too). */
export const wallMs = (): number => performance.timeOrigin + performance.now()

let lines: string[] = []

/** Note that the entry of sequence `seq` passed `hop` at `at` (tracing only: callers test `tracing` first). */
export function mark(seq: number, hop: string, at: number): void {
  lines.push(`${seq} ${hop} ${at.toFixed(3)}\n`)
}

function flush(): void {
  if (!file || lines.length === 0) return
  const text = lines.join('')
  lines = []
  appendFileSync(file, text)
}

if (tracing) {
  // Written aside, off the measured path: every 200 ms and at exit.
  setInterval(flush, 200).unref?.()
  process.on('exit', flush)
}
