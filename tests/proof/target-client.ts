// Start tests/proof/target.ts in a child process and talk to it over IPC.
import { join } from 'node:path'
import { testDir } from '../helpers'

export type Target = {
  url: string
  fixtures: any
  call<T = any>(cmd: string): Promise<T>
  /** Lines the server logged at error level (an unhandled error, a failed gateway frame). */
  errors: string[]
  stop(): Promise<void>
}

export async function startTarget(env: Record<string, string> = {}): Promise<Target> {
  const pending = new Map<number, (value: unknown) => void>()
  let ready: () => void
  const isReady = new Promise<void>((resolve) => (ready = resolve))
  let next = 0
  const proc = Bun.spawn([process.execPath, 'run', join(import.meta.dir, 'target.ts')], {
    cwd: join(import.meta.dir, '..', '..'),
    env: {
      ...process.env,
      LOG_LEVEL: 'error',
      GATEWAY_HEARTBEAT_MS: '1000',
      NEW_LOGIN_LOCATION_CHECK: 'false',
      // Fuzzed X-Forwarded-For headers spread requests over many client IPs, as many clients would.
      TRUST_PROXY: 'true',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
    serialization: 'json',
    ipc(message: any) {
      if (message?.ready) ready()
      else pending.get(message.id)?.(message.reply)
    },
  })
  const errors: string[] = []
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    let rest = ''
    for await (const chunk of stream) {
      rest += decoder.decode(chunk, { stream: true })
      const lines = rest.split('\n')
      rest = lines.pop()!
      for (const line of lines) if (line.trim()) errors.push(line)
    }
  }
  void drain(proc.stdout)
  void drain(proc.stderr)
  const exited = proc.exited.then((code) => {
    for (const resolve of pending.values()) resolve({ error: `target exited with ${code}` })
  })
  await Promise.race([isReady, exited.then(() => Promise.reject(new Error(`target exited: ${errors.join('\n')}`)))])
  const call = <T>(cmd: string) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next
      pending.set(id, (reply: any) => {
        pending.delete(id)
        if (reply && typeof reply === 'object' && 'error' in reply) reject(new Error(reply.error))
        else resolve(reply)
      })
      proc.send({ id, cmd })
    })
  const fixtures = await call<any>('fixtures')
  return {
    url: fixtures.url,
    fixtures,
    call,
    errors,
    async stop() {
      proc.kill('SIGTERM')
      await Promise.race([proc.exited, Bun.sleep(3000)])
      proc.kill('SIGKILL')
    },
  }
}

export { testDir }
