// The outbox's relay loop (src/cluster/outbox.ts) in this process, on the test server, with a log that records what
// it is given: a caller of relay() waits for a relay that begins after its call, whenever it calls, including in the
// moment the loop ends (its waiters are answered a microtask before the loop lets go of its turn).
import { expect, test } from 'bun:test'
import type { GatewayLog } from '../../src/cluster/log'
import { startOutbox } from '../../src/cluster/outbox'
import { server } from '../helpers'

const quietLog = { appendInOrder: async () => 0, appendNow: async () => 0, forget: async () => {} }

const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([p.then(() => 'answered'), Bun.sleep(ms).then(() => 'still waiting')])

test('a relay asked for as the loop ends (its first waiter answered) still runs: its caller is answered', async () => {
  await server()
  const outbox = startOutbox(quietLog as unknown as GatewayLog, { sweepMs: 60_000 })
  try {
    for (let i = 0; i < 3; i++) {
      await outbox.relay()
      // The continuation of the await above runs before the loop's end lets go of it: ask again right there.
      expect(await within(outbox.relay(), 2000)).toBe('answered')
    }
  } finally {
    await outbox.stop()
  }
})
