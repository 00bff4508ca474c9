// Reading a secret in a terminal command (the CLI's passwords): one line of standard input, or typed without echo.

export class Interrupted extends Error {}

export async function passwordFromStdin(): Promise<string> {
  const text = (await Bun.stdin.text()).replace(/\r?\n$/, '')
  if (!text) throw new Error('--password-stdin: nothing on standard input')
  if (text.includes('\n')) throw new Error('--password-stdin: give the password on one line')
  return text
}

/** Read a line from the terminal without echoing it. */
export function readHidden(question: string): Promise<string> {
  const stdin = process.stdin
  // Echo off before the prompt shows: what is typed as soon as it does is never echoed.
  stdin.setRawMode(true)
  process.stderr.write(question)
  stdin.setEncoding('utf8')
  stdin.resume()
  return new Promise((resolve, reject) => {
    let value: string[] = []
    const done = () => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
    }
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          done()
          return resolve(value.join(''))
        }
        if (ch === '\u0003') {
          done()
          return reject(new Interrupted('interrupted'))
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1)
        else if (ch >= ' ') value.push(ch)
      }
    }
    stdin.on('data', onData)
  })
}
