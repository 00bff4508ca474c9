// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// Guild events through the Gateway outbox (src/cluster/outbox.ts) on three real nodes: a join, its events and the
// joiner's topic subscriptions are given inside the transaction that adds the member, so a node killed right after
// that COMMIT (LOBBY_TEST_DIE_AFTER_COMMIT=GUILD_MEMBER_ADD: the node SIGKILLs itself there, before its relay) loses
// none of them: a live node's sweeper relays the rows, and each socket gets its event once.
import { describe, expect, test } from 'bun:test'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

const outboxRows = async () => Number((await cluster.database.sql`SELECT count(*) AS n FROM gateway_outbox`)[0].n)

describe.skipIf(!present)('guild events through the outbox', () => {
  test('a join through a node killed right after its COMMIT: GUILD_MEMBER_ADD on another node, GUILD_CREATE to the joiner, who follows the channel', async () => {
    const [a, c] = cluster.nodes
    const dying = await cluster.start({ LOBBY_TEST_DIE_AFTER_COMMIT: 'GUILD_MEMBER_ADD' })
    const owner = await cluster.newUser()
    const joining = await cluster.newUser()
    const guild = await call(a, 'POST', '/guilds', owner.token, { name: 'Outbox guild' })
    expect(guild.status).toBe(201)
    const channels = await call(a, 'GET', `/guilds/${guild.body.id}/channels`, owner.token)
    const channelId = channels.body.find((ch: { type: number }) => ch.type === 0).id as string
    const invite = await call(a, 'POST', `/channels/${channelId}/invites`, owner.token, { max_age: 0 })
    expect(invite.status).toBe(200)
    const ownerSocket = (await cluster.socketOn(a, owner.token)).client
    const joinerSocket = (await cluster.socketOn(c, joining.token)).client

    await expect(call(dying, 'POST', `/invites/${invite.body.code}`, joining.token)).rejects.toThrow()
    expect(await dying.proc.exited).not.toBe(0)

    // No other write comes: the sweeper of a live node relays the rows once they are older than ~5 s.
    const added = await ownerSocket.waitFor('GUILD_MEMBER_ADD', 15_000)
    expect(added.d).toMatchObject({ guild_id: guild.body.id, user: { id: joining.id } })
    const created = await joinerSocket.waitFor('GUILD_CREATE', 15_000)
    expect(created.d.id).toBe(guild.body.id)
    expect(created.d.channels.map((ch: { id: string }) => ch.id)).toContain(channelId)
    // The joiner's sessions follow the guild's channels now: a message reaches its socket on the other node.
    const sent = await call(c, 'POST', `/channels/${channelId}/messages`, owner.token, { content: 'welcome' })
    expect(sent.status).toBe(200)
    await joinerSocket.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'welcome', 5000)
    await Bun.sleep(300)
    expect(ownerSocket.dispatches('GUILD_MEMBER_ADD')).toHaveLength(1)
    expect(joinerSocket.dispatches('GUILD_CREATE')).toHaveLength(1)
    expect((await call(a, 'GET', `/guilds/${guild.body.id}/members/${joining.id}`, owner.token)).status).toBe(200)
    expect(await outboxRows()).toBe(0)
  }, 60_000)
})
