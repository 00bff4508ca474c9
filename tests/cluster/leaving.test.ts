// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// A node going away (SIGTERM) stops taking connections before it tells its sockets to reconnect (op 7): a client that
// reconnects at once (discord.py does, through a balancer that was not told) must reach another node, not this one
// again, where it would resume a session that gets nothing more and that ends with the node (its library then gets
// op 9 elsewhere and identifies anew: what it missed is lost; tests/cluster/libraries.test.ts saw it).
import { describe, expect, test } from 'bun:test'
import { present, useNodes } from './harness'

const world = await useNodes(2)

/** Whether a TCP connection to the port is accepted (then closed again). */
const accepts = (port: number) =>
  Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } }).then(
    (socket) => {
      socket.end()
      return true
    },
    () => false,
  )

describe.skipIf(!present)('a node going away', () => {
  test('once it has sent op 7 it accepts no connection; the socket that did not close itself gets 4000', async () => {
    const [leaving, staying] = world.nodes
    const user = await world.newUser()
    const { client } = await world.socketOn(leaving, user.token)
    expect(await accepts(leaving.port)).toBe(true)
    const stopped = leaving.stop()
    await client.waitForOp(7, 10_000)
    expect(await accepts(leaving.port)).toBe(false)
    expect(await accepts(staying.port)).toBe(true)
    expect((await client.waitForClose(10_000)).code).toBe(4000)
    expect((await stopped).code).toBe(0)
  }, 30_000)
})
