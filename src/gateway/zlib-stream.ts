// Transport compression as Discord's Gateway does it for `?compress=zlib-stream`: one zlib (deflate) context for the
// whole life of a connection; every payload is deflated and flushed with Z_SYNC_FLUSH, so each binary frame ends in
// 00 00 FF FF and the client inflates the stream frame after frame with a single inflate context. The shared history
// is what makes small, repetitive JSON frames compress well.
//
// Node's zlib streams run off the main thread: writes and flushes complete in order, each flush callback gets the
// output of exactly the payloads written before it. `whenFlushed` lets a close wait for the frames queued before it.
import type { Deflate } from 'node:zlib'

// node:zlib loads with the first compressed connection rather than at start (~2 ms).
let zlib: typeof import('node:zlib') | undefined
const loadZlib = () => (zlib ??= require('node:zlib') as typeof import('node:zlib'))

export const ZLIB_SUFFIX = [0x00, 0x00, 0xff, 0xff] as const

export class ZlibStream {
  private readonly deflate: Deflate
  private chunks: Buffer[] = []
  private pending = 0
  private idle: (() => void)[] = []
  private ended = false

  constructor(private readonly write: (bytes: Buffer) => void) {
    this.deflate = loadZlib().createDeflate()
    this.deflate.on('data', (chunk: Buffer) => this.chunks.push(chunk))
    // A broken context cannot go on: the connection's frames stop (the caller closes it on its own timers).
    this.deflate.on('error', () => this.end())
  }

  /** Deflate one payload; its frame is written once the sync flush completes. */
  send(payload: string): void {
    if (this.ended) return
    this.pending += 1
    this.deflate.write(payload)
    this.deflate.flush(loadZlib().constants.Z_SYNC_FLUSH, () => {
      const bytes = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks)
      this.chunks = []
      this.pending -= 1
      if (!this.ended && bytes.length) this.write(bytes)
      if (this.pending === 0) for (const fn of this.idle.splice(0)) fn()
    })
  }

  /** Run `fn` once every payload sent so far has been written (at once when none is pending). */
  whenFlushed(fn: () => void): void {
    if (this.pending === 0 || this.ended) fn()
    else this.idle.push(fn)
  }

  /** The connection is gone: release the context. */
  end(): void {
    if (this.ended) return
    this.ended = true
    for (const fn of this.idle.splice(0)) fn()
    this.deflate.close()
  }
}
