// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Provisional accounts on two nodes (issue 44): 50 concurrent first calls for one player, spread over both nodes, make
// one account; an operator's lock (the CLI, a third process) ends its token and its socket on the other node at once;
// an application's lock (`app lock`) closes its bot's and its players' sockets on both nodes at once.
import { describe, expect, test } from 'bun:test'
import { cli } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

describe.skipIf(!present)('provisional accounts on two nodes', () => {
  test('50 concurrent first calls over two nodes make one account; a lock closes its socket on the other node', async () => {
    const app = await cluster.newApp()
    const [a, b] = cluster.nodes
    const replies = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        call(i % 2 ? b : a, 'POST', '/partner-sdk/token/bot', app.bot, { external_user_id: 'cluster-player' }),
      ),
    )
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200))
    const ids = new Set<string>()
    for (const [i, r] of replies.entries())
      ids.add((await call(i % 2 ? a : b, 'GET', '/users/@me', `Bearer ${r.body.access_token}`)).body.id)
    expect(ids.size).toBe(1)
    const [id] = ids

    const bearer = `Bearer ${replies[0].body.access_token}`
    const { client } = await cluster.socketOn(b, bearer)
    const locked = await cli(cluster.env, ['user', 'lock', '--id', id])
    expect(locked.code).toBe(0)
    expect((await client.waitForClose(3000)).code).toBe(4004)
    expect((await call(a, 'GET', '/users/@me', bearer)).status).toBe(401)
    expect(
      (await call(b, 'POST', '/partner-sdk/token/bot', app.bot, { external_user_id: 'cluster-player' })).status,
    ).toBe(403)
  }, 60_000)

  test("`app lock` from the CLI closes the bot's and a player's sockets on both nodes at once", async () => {
    const app = await cluster.newApp()
    const [a, b] = cluster.nodes
    const issued = await call(a, 'POST', '/partner-sdk/token/bot', app.bot, { external_user_id: 'locked-player' })
    expect(issued.status).toBe(200)
    const bearer = `Bearer ${issued.body.access_token}`
    const sockets = [
      (await cluster.socketOn(a, app.bot)).client,
      (await cluster.socketOn(b, bearer)).client,
      (await cluster.socketOn(b, app.bot)).client,
    ]
    const locked = await cli(cluster.env, ['app', 'lock', '--id', app.id])
    const committed = Date.now()
    expect(locked.code).toBe(0)
    for (const s of sockets) expect((await s.waitForClose(4000)).code).toBe(4004)
    expect(Date.now() - committed).toBeLessThan(4000)
    expect((await call(b, 'GET', '/users/@me', bearer)).status).toBe(401)
  }, 60_000)
})
