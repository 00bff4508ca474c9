// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// The Gateway's outbox (src/cluster/outbox.ts) with three real nodes: a lobby message's event is written in the
// message's own transaction, so a node killed right after its COMMIT (LOBBY_TEST_DIE_AFTER_COMMIT: the node SIGKILLs
// itself there, before its relay) loses nothing: another node relays the row, and every socket gets the event once.
// Events of one topic keep their commit order even when the later commit is relayed first; with Redis down the
// writes still commit and their events go out, in order, once it is back.
import { describe, expect, test } from 'bun:test'
import type { GatewayClient } from '../gateway-client'
import type { Served } from '../ops/process-helpers'
import { call, present, useNodes } from './harness'

const DIE = { LOBBY_TEST_DIE_AFTER_COMMIT: 'LOBBY_MESSAGE_CREATE' }

const cluster = await useNodes(2)

const lobbyWithSockets = (on: Served[]) => cluster.lobbyWithSockets(on)

const contents = (s: GatewayClient) => s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.content as string)

/** POST through a node that dies right after the COMMIT: the connection drops, no answer. */
async function postAndDie(node: Served, post: (node: Served, content: string) => Promise<unknown>, content: string) {
  await expect(post(node, content)).rejects.toThrow()
  expect(await node.proc.exited).not.toBe(0)
}

const outboxRows = async () => Number((await cluster.database.sql`SELECT count(*) AS n FROM gateway_outbox`)[0].n)

describe.skipIf(!present)('the Gateway outbox on three nodes', () => {
  test('a node killed right after its COMMIT: another node relays the event, each socket gets it once', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start(DIE)
    const { sockets, post } = await lobbyWithSockets([a, c])
    await postAndDie(dying, post, 'orphan')
    // No other write comes: the sweeper of a live node relays the row once it is older than ~5 s.
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'orphan', 15_000)
    expect((await post(a, 'next')).status).toBe(201)
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'next', 5000)
    await Bun.sleep(300)
    for (const s of sockets) expect(contents(s)).toEqual(['orphan', 'next'])
    expect(await outboxRows()).toBe(0)
  }, 60_000)

  test('what a write makes other nodes forget goes with its COMMIT: a lobby changed through a node killed right after it reads new elsewhere', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'LOBBY_UPDATE' })
    const { id, bot } = await lobbyWithSockets([a, c])
    const metadataOn = async (node: Served) => (await call(node, 'GET', `/lobbies/${id}`, bot)).body.metadata
    for (let i = 0; i < 3; i++) expect(await metadataOn(c)).toBeNull() // cached on c now
    await expect(call(dying, 'PATCH', `/lobbies/${id}`, bot, { metadata: { round: '2' } })).rejects.toThrow()
    expect(await dying.proc.exited).not.toBe(0)
    // Its outbox holds the invalidations beside the event, committed with the change (before, they were appended
    // after the COMMIT by the node, which a death in between lost: c then served the old row for good).
    const entries = await cluster.database.sql`SELECT entry FROM gateway_outbox ORDER BY id`
    const caches = entries.map((r) => JSON.parse(r.entry)).filter((e) => e.kind === 'invalidate')
    expect(caches.map((e) => e.cache)).toContain('lobbies')
    expect(caches.every((e) => e.keys === null || e.keys.includes(id))).toBe(true)
    // A live node's sweeper relays them all (~5–7 s), and c, which reads the log, forgets the row it cached.
    let until = Date.now() + 15_000
    while (Date.now() < until && (await outboxRows()) > 0) await Bun.sleep(100)
    expect(await outboxRows()).toBe(0)
    until = Date.now() + 2000
    while (Date.now() < until && (await metadataOn(c))?.round !== '2') await Bun.sleep(50)
    expect(await metadataOn(c)).toEqual({ round: '2' })
  }, 60_000)

  test('a member added through a node killed right after its COMMIT: the add, the join and the subscription reach the other nodes once', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'LOBBY_MEMBER_ADD' })
    const { id, bot, sockets, post } = await lobbyWithSockets([a, c])
    const joining = await cluster.newUser()
    const { client: joiner } = await cluster.socketOn(c, joining.token)
    await expect(call(dying, 'PUT', `/lobbies/${id}/members/${joining.id}`, bot, {})).rejects.toThrow()
    expect(await dying.proc.exited).not.toBe(0)
    for (const s of sockets) await s.waitFor((f) => f.t === 'LOBBY_MEMBER_ADD' && f.d.member.id === joining.id, 15_000)
    // The new member heard of its lobby and follows it now: the next message reaches its socket too.
    await joiner.waitFor((f) => f.t === 'LOBBY_CREATE' && f.d.id === id, 5000)
    expect((await post(a, 'welcome')).status).toBe(201)
    for (const s of [...sockets, joiner]) await s.waitFor((f) => f.d?.content === 'welcome', 5000)
    await Bun.sleep(300)
    for (const s of sockets) expect(s.dispatches('LOBBY_MEMBER_ADD')).toHaveLength(1)
    expect(joiner.dispatches('LOBBY_CREATE')).toHaveLength(1)
    expect(await outboxRows()).toBe(0)
  }, 60_000)

  test('one topic keeps its commit order: a commit whose relay never came is sent before a later commit relayed at once', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start(DIE)
    const { sockets, post } = await lobbyWithSockets([a, c])
    await postAndDie(dying, post, 'committed first')
    // Committed second, relayed first by its own node: its relay takes every committed row by id, the orphan first.
    expect((await post(c, 'committed second')).status).toBe(201)
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'committed second', 5000)
    await Bun.sleep(300)
    for (const s of sockets) expect(contents(s)).toEqual(['committed first', 'committed second'])
    const seqs = sockets.map((s) => s.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.s))
    expect(seqs[0]).toEqual(seqs[1])
  }, 60_000)

  test('a write on a topic waits for the transaction that holds the topic’s lock (so its id comes after that commit)', async () => {
    const [a] = cluster.nodes
    const { id, sockets, post } = await lobbyWithSockets([a])
    let answered = false
    let posted: Promise<unknown> | undefined
    await cluster.database.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`lobby:${id}`}, 0))`
      posted = post(a, 'after the lock').then((r) => {
        answered = true
        return r
      })
      await Bun.sleep(500)
      expect(answered).toBe(false)
    })
    expect(((await posted) as { status: number }).status).toBe(201)
    await sockets[0].waitFor((f) => f.d?.content === 'after the lock', 5000)
  }, 60_000)

  test('Redis down: writes still commit and answer; their events wait and go out in order, once, when it is back', async () => {
    const [a, c] = cluster.nodes
    const { id, sockets, post } = await lobbyWithSockets([a, c])
    expect((await post(a, 'before')).status).toBe(201)
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'before', 5000)
    cluster.redis.kill()
    for (let i = 0; i < 5; i++) expect((await post(i % 2 ? a : c, `while down ${i}`)).status).toBe(201)
    // Each message's event, and what it makes the other nodes forget (its lobby's cached pages of messages); the
    // nodes' own background writes meanwhile (sweeps, presence) may add entries that name other things.
    const kinds = await cluster.database
      .sql`SELECT entry::json->>'kind' AS kind, count(DISTINCT event_id) AS n FROM gateway_outbox
      WHERE position(${id} in entry) > 0 GROUP BY 1 ORDER BY 1`
    expect(kinds.map((r) => [r.kind, Number(r.n)])).toEqual([
      ['dispatch', 5],
      ['invalidate', 5],
    ])
    await cluster.redis.restart()
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'while down 4', 20_000)
    expect((await post(a, 'after')).status).toBe(201)
    for (const s of sockets) await s.waitFor((f) => f.d?.content === 'after', 5000)
    await Bun.sleep(300)
    const expected = ['before', ...Array.from({ length: 5 }, (_, i) => `while down ${i}`), 'after']
    for (const s of sockets) expect(contents(s)).toEqual(expected)
    expect(await outboxRows()).toBe(0)
  }, 60_000)
})
