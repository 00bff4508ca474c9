// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Provisional accounts on two nodes (issue 44): 50 concurrent first calls for one player, spread over both nodes, make
// one account; an operator's lock (the CLI, a third process) ends its token and its socket on the other node at once;
// an application's lock (`app lock`) closes its bot's and its players' sockets on both nodes at once; one player merged
// into two full accounts through the two nodes at once is merged once, its lobby and messages with it.
import { describe, expect, test } from 'bun:test'
import { cli } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const REDIRECT = 'http://localhost/callback'

/** POST /oauth2/token (a form, the client's credentials by HTTP Basic) to one node. */
async function tokenOn(node: { url: string }, client: [string, string], form: Record<string, string>) {
  const r = await fetch(`${node.url}/api/v10/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(client.join(':')).toString('base64')}`,
    },
    body: new URLSearchParams(form).toString(),
  })
  return { status: r.status, body: (await r.json()) as any }
}

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

  test('one player merged into two full accounts through both nodes at once: one merge, the other refused, nothing lost', async () => {
    const [a, b] = cluster.nodes
    const made = await cli(cluster.env, ['app', 'create', '--name', 'Merge race', '--redirect-uri', REDIRECT])
    const app = JSON.parse(made.stdout)
    const bot = `Bot ${app.bot_token}`
    const issued = await call(a, 'POST', '/partner-sdk/token/bot', bot, { external_user_id: 'merged-twice' })
    const guest = `Bearer ${issued.body.access_token}`
    const guestId = (await call(a, 'GET', '/users/@me', guest)).body.id
    const lobby = await call(a, 'PUT', '/lobbies', guest, { secret: 'merge-race' })
    expect((await call(b, 'POST', `/lobbies/${lobby.body.id}/messages`, guest, { content: 'mine' })).status).toBe(201)

    const [x, y] = [await cluster.newUser(), await cluster.newUser()]
    const query = new URLSearchParams({
      client_id: app.id,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'identify lobbies.write',
    })
    const codeOf = async (node: typeof a, user: typeof x) => {
      const r = await call(node, 'POST', `/oauth2/authorize?${query}`, user.token, { authorize: true })
      return new URL(r.body.location).searchParams.get('code')!
    }
    const [codeX, codeY] = [await codeOf(a, x), await codeOf(b, y)]
    const merge = (node: typeof a, code: string) =>
      tokenOn(node, [app.id, app.client_secret], {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
        external_auth_token: issued.body.access_token,
      })
    const results = await Promise.all([merge(a, codeX), merge(b, codeY)])
    const won = results.findIndex((r) => r.status === 200)
    expect(won).toBeGreaterThanOrEqual(0)
    const lost = results[1 - won]
    // The loser meets the merged identity (530014), or finds the player's credential already ended (50014).
    expect([
      [400, 530014],
      [401, 50014],
    ]).toContainEqual([lost.status, lost.body.code])
    const winner = [x, y][won]
    const bearer = `Bearer ${results[won].body.access_token}`
    // Nothing lost: the lobby and the message are the winner's; the player's token ended; its identity names the winner.
    const members = (await call(b, 'GET', `/lobbies/${lobby.body.id}`, bot)).body.members.map((m: any) => m.id)
    expect(members).toEqual([winner.id])
    const page = await call(a, 'GET', `/lobbies/${lobby.body.id}/messages`, bearer)
    expect(page.body.map((m: any) => [m.author.id, m.content])).toEqual([[winner.id, 'mine']])
    expect((await call(b, 'GET', '/users/@me', guest)).status).toBe(401)
    const again = await call(b, 'POST', '/partner-sdk/token/bot', bot, { external_user_id: 'merged-twice' })
    expect([again.status, again.body.code]).toEqual([400, 530010])
    expect(guestId).not.toBe(winner.id)
  }, 60_000)
})
