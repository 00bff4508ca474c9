// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The relay step right behind a write's COMMIT (src/cluster/outbox.ts behind, db/pg/client.ts runOn) and what waits on
// relays, with two real nodes:
// - a step takes the oldest BATCH (500) rows of its partitions: when older rows fill it (a backlog in the write's
//   partition: a dead node's rows, a batch of many writes), the write's own rows are left, and the relay loop is asked
//   for them; they never wait for the sweeper;
// - a member removed through one node, while the relays stall (Redis away, a relay waiting for row locks): the other
//   node still holds the member list cached (its invalidation waits in the outbox with the event), and the removed
//   member's message (or read) through it must still be refused.
import { describe, expect, test } from 'bun:test'
import { PARTITIONS, partitionOf } from '../../src/cluster/outbox'
import { cli } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

const outboxRows = async () => Number((await cluster.database.sql`SELECT count(*) AS n FROM gateway_outbox`)[0].n)
/** A row any node relays as an entry that changes nothing (an invalidation of a cache no version has). */
const FILLER = JSON.stringify({ kind: 'invalidate', cache: 'no-such-cache', keys: [] })

/** A user's `Bearer` token for an application (authorization code flow through `node`), with `scope`. */
async function bearerThrough(node: { url: string }, user: { token: string }, scope: string) {
  const redirect = 'http://localhost/callback'
  const made = await cli(cluster.env, [
    'app',
    'create',
    '--name',
    `Relay game ${Date.now()}`,
    '--redirect-uri',
    redirect,
  ])
  if (made.code !== 0) throw new Error(made.stderr)
  const app = JSON.parse(made.stdout)
  const query = new URLSearchParams({ client_id: app.id, response_type: 'code', redirect_uri: redirect, scope })
  const approved = await call(node, 'POST', `/oauth2/authorize?${query}`, user.token, { authorize: true })
  const code = new URL(approved.body.location).searchParams.get('code')!
  const token = await fetch(`${node.url}/api/v10/oauth2/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${app.id}:${app.client_secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirect }).toString(),
  })
  return {
    bot: `Bot ${app.bot_token}`,
    bearer: `Bearer ${((await token.json()) as { access_token: string }).access_token}`,
  }
}

describe.skipIf(!present)('the relay behind a COMMIT', () => {
  test('a commit behind 500 older rows of its partition: its own rows are relayed by the loop at once, not left for the sweeper', async () => {
    const [a, c] = cluster.nodes
    const { id, sockets, post } = await cluster.lobbyWithSockets([a, c])
    await Bun.sleep(300) // what the setup's writes relay is done
    const now = Date.now()
    const part = partitionOf(`lobby:${id}`)
    await cluster.database.sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
      SELECT 'backlog-' || n || '-' || ${now}, ${FILLER}, ${now}, ${part}, ${String(part)}
      FROM generate_series(1, 500) AS n`
    expect((await post(a, 'behind a backlog')).status).toBe(201)
    // The sweeper would take it only once the oldest row is ~5 s old; a relay the commit asks for takes it at once.
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'behind a backlog', 2500)
    // A step appends before its COMMIT deletes the rows: the sockets may have the message a moment before the table
    // is empty (2 rows left once, under the suite's load). Still well before the sweeper's 5 s.
    const until = Date.now() + 1000
    while (Date.now() < until && (await outboxRows()) > 0) await Bun.sleep(50)
    expect(await outboxRows()).toBe(0)
  }, 60_000)

  test('a member removed through one node while relays stall cannot post through the other', async () => {
    const [a, c] = cluster.nodes
    const user = await cluster.newUser()
    const { bot, bearer } = await bearerThrough(a, user, 'identify lobbies.write')
    const lobby = await call(a, 'POST', '/lobbies', bot, { members: [{ id: user.id }] })
    expect(lobby.status).toBe(201)
    const id = lobby.body.id as string
    const postAs = (node: { url: string }, content: string) =>
      call(node, 'POST', `/lobbies/${id}/messages`, bearer, { content })
    expect((await postAs(c, 'a member')).status).toBe(201)
    expect((await call(c, 'GET', `/lobbies/${id}/messages`, bearer)).status).toBe(200) // c holds the member list now
    // Relays stall: a row of each partition is locked, and every relay waits for it (as one waits for a relay of its
    // partition elsewhere).
    const now = Date.now()
    await cluster.database.sql`INSERT INTO gateway_outbox (event_id, entry, created_at, part, parts)
      SELECT ${`stall-${now}-`} || p, ${FILLER}, ${now}, p, p::text FROM generate_series(0, ${PARTITIONS - 1}) AS p`
    const held = Promise.withResolvers<void>()
    const locked = Promise.withResolvers<void>()
    const holding = cluster.database.sql.begin(async (tx) => {
      await tx`SELECT id FROM gateway_outbox WHERE event_id LIKE ${`stall-${now}-%`} FOR UPDATE`
      locked.resolve()
      await held.promise
    })
    await locked.promise
    try {
      expect((await call(a, 'DELETE', `/lobbies/${id}/members/${user.id}`, bot)).status).toBe(204)
      expect((await postAs(c, 'no longer a member')).status).toBe(404)
      // Nor reads its messages there (a route that asks once, outside any transaction).
      expect((await call(c, 'GET', `/lobbies/${id}/messages`, bearer)).status).toBe(404)
    } finally {
      held.resolve()
      await holding
    }
    const until = Date.now() + 15_000
    while (Date.now() < until && (await outboxRows()) > 0) await Bun.sleep(100)
    const stored = await cluster.database.sql`SELECT count(*)::int AS n FROM lobby_messages
      WHERE lobby_id = ${id} AND content = 'no longer a member'`
    expect(stored[0].n).toBe(0)
  }, 60_000)
})
