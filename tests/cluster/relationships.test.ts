// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Relationships and presence on two nodes (issue 45): a friend request sent and accepted through node A reaches the
// users' sockets on node B, once and in order; a presence set on node A reaches the friend on node B, and the user's
// last session ending on node A (while its other one on node B ended before) is offline there. A DM opened and
// written through node A reaches the recipient's socket on node B: CHANNEL_CREATE, then each message once, in order.
// Last, a node SIGKILLed with the user's only session: offline to its friend on the other node once the node's lease
// is gone (NODE_LEASE_MS, short here) and the short resume window has passed with no Resume.
import { describe, expect, test } from 'bun:test'
import { call, present, useNodes } from './harness'

// Its nodes' resume window is short: the killed node's session ends 3 s after the clean-up finds it.
const cluster = await useNodes(2, { GATEWAY_RESUME_WINDOW_MS: '3000', NODE_LEASE_MS: '6000' })

describe.skipIf(!present)('relationships on two nodes', () => {
  test('a request accepted on node A is seen on node B; presence and offline across nodes', async () => {
    const [nodeA, nodeB] = cluster.nodes
    const [a, b] = [await cluster.newUser(), await cluster.newUser()]
    const { client: bOnB } = await cluster.socketOn(nodeB, b.token)
    const { client: aOnB } = await cluster.socketOn(nodeB, a.token)

    expect((await call(nodeA, 'PUT', `/users/@me/relationships/${b.id}`, a.token, {})).status).toBe(204)
    expect((await call(nodeA, 'PUT', `/users/@me/relationships/${a.id}`, b.token, {})).status).toBe(204)
    const toB = await bOnB.waitFor((f) => f.t === 'RELATIONSHIP_ADD' && f.d.type === 1)
    const toA = await aOnB.waitFor((f) => f.t === 'RELATIONSHIP_ADD' && f.d.type === 1)
    expect([toB.d.id, toA.d.id]).toEqual([a.id, b.id])
    // Once each, after the request.
    expect(bOnB.dispatches('RELATIONSHIP_ADD').map((f) => f.d.type)).toEqual([3, 1])
    expect(aOnB.dispatches('RELATIONSHIP_ADD').map((f) => f.d.type)).toEqual([4, 1])

    // A's second session, on node A: op 3 there reaches B on node B.
    const { client: aOnA } = await cluster.socketOn(nodeA, a.token)
    aOnA.send(3, { status: 'dnd', activities: [{ name: 'Across nodes', type: 0, secrets: { join: 'x' } }] })
    const dnd = await bOnB.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.status === 'dnd', 5000)
    expect(dnd.d.activities).toEqual([{ name: 'Across nodes', type: 0 }])
    // A's session on node B ends: A is still online (node A). Its last one ends: offline on node B.
    aOnB.close()
    await bOnB.expectNo('PRESENCE_UPDATE', 500)
    aOnA.close()
    const off = await bOnB.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.status === 'offline', 5000)
    expect(off.d.user.id).toBe(a.id)

    // A session resumed on the other node is still the user's one session: no offline when the old node lets go,
    // offline when it ends there.
    const { client: first, ready } = await cluster.socketOn(nodeA, a.token)
    await bOnB.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.status === 'online', 5000, {
      since: bOnB.frames.indexOf(off) + 1,
    })
    first.close(4200) // resumable
    const moved = await cluster.connect(nodeB)
    moved.send(6, { token: a.token, session_id: ready.session_id, seq: first.lastSeq })
    expect((await moved.waitFor((f) => f.t === 'RESUMED' || f.op === 9, 5000)).t).toBe('RESUMED')
    const mark = bOnB.frames.length
    await bOnB.expectNo('PRESENCE_UPDATE', 1000)
    moved.close()
    await bOnB.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.status === 'offline', 5000, { since: mark })
  }, 60_000)

  test('a DM written through node A reaches the recipient on node B once and in order', async () => {
    const [nodeA, nodeB] = cluster.nodes
    const [a, b] = [await cluster.newUser(), await cluster.newUser()]
    expect((await call(nodeA, 'PUT', `/users/@me/relationships/${b.id}`, a.token, {})).status).toBe(204)
    expect((await call(nodeB, 'PUT', `/users/@me/relationships/${a.id}`, b.token, {})).status).toBe(204)
    const { client: bOnB } = await cluster.socketOn(nodeB, b.token)
    const dm = await call(nodeA, 'POST', '/users/@me/channels', a.token, { recipient_id: b.id })
    expect(dm.status).toBe(200)
    const sent: string[] = []
    for (const content of ['one', 'two', 'three'])
      sent.push((await call(nodeA, 'POST', `/channels/${dm.body.id}/messages`, a.token, { content })).body.id)
    await bOnB.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === sent[2], 5000)
    const seen = bOnB.frames.filter((f) => f.t === 'CHANNEL_CREATE' || f.t === 'MESSAGE_CREATE')
    expect(seen.map((f) => [f.t, f.d.id])).toEqual([
      ['CHANNEL_CREATE', dm.body.id],
      ...sent.map((id) => ['MESSAGE_CREATE', id]),
    ])
  }, 30_000)
  test('a node SIGKILLed with the last session: offline on the other node after its lease', async () => {
    const [nodeA, nodeB] = cluster.nodes
    const [a, b] = [await cluster.newUser(), await cluster.newUser()]
    expect((await call(nodeA, 'PUT', `/users/@me/relationships/${b.id}`, a.token, {})).status).toBe(204)
    expect((await call(nodeA, 'PUT', `/users/@me/relationships/${a.id}`, b.token, {})).status).toBe(204)
    const { client: bOnA } = await cluster.socketOn(nodeA, b.token)
    await cluster.socketOn(nodeB, a.token)
    await bOnA.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === a.id && f.d.status === 'online', 5000)
    const mark = bOnA.frames.length
    nodeB.proc.kill('SIGKILL')
    await nodeB.proc.exited
    // Its lease (NODE_LEASE_MS: 6 s here), a round of the clean-up (5 s), the resume window (3 s).
    const off = await bOnA.waitFor((f) => f.t === 'PRESENCE_UPDATE' && f.d.user.id === a.id, 45_000, { since: mark })
    expect(off.d).toEqual({ user: { id: a.id }, status: 'offline', activities: [], client_status: {} })
    const ready = (await cluster.socketOn(nodeA, b.token)).ready
    expect(ready.presences).toEqual([])
  }, 60_000)
})
