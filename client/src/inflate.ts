// zlib-stream for the Gateway: one inflate context (DecompressionStream 'deflate') for the whole connection, fed every
// binary frame in order; its text is cut into JSON messages where each top-level object closes (an output chunk may
// end inside one message, or hold the end of one and the start of the next).

export class Inflater {
  private readonly writer: { write(chunk: Uint8Array<ArrayBuffer>): Promise<void>; abort(): Promise<void> }
  private readonly decoder = new TextDecoder()
  private text = ''
  /** Where the scan of `text` stopped, and its state there. */
  private at = 0
  private depth = 0
  private inString = false
  private escaped = false
  private ended = false

  constructor(
    private readonly onMessage: (text: string) => void,
    onError: () => void,
  ) {
    const stream = new DecompressionStream('deflate')
    this.writer = stream.writable.getWriter()
    const reader = stream.readable.getReader()
    const pump = async () => {
      for (;;) {
        const { value, done } = await reader.read()
        if (done || this.ended) return
        this.take(this.decoder.decode(value as Uint8Array<ArrayBuffer>, { stream: true }))
      }
    }
    pump().catch(() => {
      if (!this.ended) onError()
    })
  }

  push(bytes: Uint8Array<ArrayBuffer>): void {
    if (!this.ended) this.writer.write(bytes).catch(() => undefined)
  }

  end(): void {
    if (this.ended) return
    this.ended = true
    this.writer.abort().catch(() => undefined)
  }

  private take(chunk: string): void {
    this.text += chunk
    let start = 0
    for (let i = this.at; i < this.text.length; i++) {
      const c = this.text.charCodeAt(i)
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (c === 92)
          this.escaped = true // backslash
        else if (c === 34) this.inString = false // quote
      } else if (c === 34) this.inString = true
      else if (c === 123 || c === 91)
        this.depth++ // { [
      else if ((c === 125 || c === 93) && --this.depth === 0) {
        // } ] closing the top-level value: one message
        const message = this.text.slice(start, i + 1)
        start = i + 1
        if (!this.ended) this.onMessage(message)
      }
    }
    this.text = this.text.slice(start)
    this.at = this.text.length
  }
}
