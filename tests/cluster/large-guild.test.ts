// suite: one pass (its nodes run on PostgreSQL whichever pass runs it: scripts/test-both.ts)
// A guild of 30 000 members on two real nodes: a change that re-follows every member (a role's permissions, a channel
// created or deleted, the guild deleted) is a few topic calls per page of members in its transaction, each locking its
// topics (src/cluster/outbox.ts keysOf). A call and a lock per member made such a transaction exceed PostgreSQL's lock
// table (tests/db/postgres.ts: max_connections 200, max_locks_per_transaction 64; 24 000 advisory locks in one
// transaction fail there with "out of shared memory"): the change answered 500. The members are seeded with SQL
// (30 000 joins through REST would take minutes); one more, joined through REST, has a socket on the other node and
// sees what its permissions allow, in order.
import { describe, expect, test } from 'bun:test'
import { call, present, useNodes } from './harness'

const cluster = await useNodes(2)

const SEEDED = 30_000
const VIEW_CHANNEL = 1n << 10n

describe.skipIf(!present)('a guild of many thousands of members on several nodes', () => {
  test('role and channel changes that re-follow every member answer, and a member on another node sees exactly what it may view', async () => {
    const [a, b] = cluster.nodes
    const owner = await cluster.newUser()
    const member = await cluster.newUser()
    const guild = await call(a, 'POST', '/guilds', owner.token, { name: 'Large guild' })
    expect(guild.status).toBe(201)
    const guildId = guild.body.id as string
    const channels = await call(a, 'GET', `/guilds/${guildId}/channels`, owner.token)
    const channelId = channels.body.find((ch: { type: number }) => ch.type === 0).id as string
    const invite = await call(a, 'POST', `/channels/${channelId}/invites`, owner.token, { max_age: 0 })
    expect((await call(a, 'POST', `/invites/${invite.body.code}`, member.token)).status).toBe(200)
    const sql = cluster.database.sql
    await sql`INSERT INTO users (id, username, created_at)
      SELECT (9000000000000000000 + g)::text, 'seeded-' || g, 0 FROM generate_series(1, ${SEEDED}) AS g`
    await sql`INSERT INTO guild_members (guild_id, user_id, joined_at)
      SELECT ${guildId}, (9000000000000000000 + g)::text, 0 FROM generate_series(1, ${SEEDED}) AS g`
    const socket = (await cluster.socketOn(b, member.token)).client

    const everyone = (await call(a, 'GET', `/guilds/${guildId}/roles`, owner.token)).body.find(
      (r: { id: string }) => r.id === guildId,
    )
    const allowed = BigInt(everyone.permissions) | VIEW_CHANNEL
    const setEveryone = (permissions: bigint) =>
      call(a, 'PATCH', `/guilds/${guildId}/roles/${guildId}`, owner.token, { permissions: permissions.toString() })
    const post = async (channel: string, content: string) =>
      expect((await call(a, 'POST', `/channels/${channel}/messages`, owner.token, { content })).status).toBe(200)
    const said = () => socket.dispatches('MESSAGE_CREATE').map((f) => f.d.content as string)

    // Not allowed: the channel's messages no longer reach the member; the role's update, on the guild's topic, does.
    expect((await setEveryone(allowed & ~VIEW_CHANNEL)).status).toBe(200)
    await post(channelId, 'before being allowed')
    // Allowed again: the next message reaches it on the other node, the one before never does.
    expect((await setEveryone(allowed)).status).toBe(200)
    await socket.waitFor((f) => f.t === 'GUILD_ROLE_UPDATE' && BigInt(f.d.role.permissions) === allowed, 10_000)
    await post(channelId, 'allowed')
    await socket.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'allowed', 10_000)

    // A channel created is followed by every member who may view it before it is announced there.
    const created = await call(a, 'POST', `/guilds/${guildId}/channels`, owner.token, { name: 'new' })
    expect(created.status).toBe(201)
    await socket.waitFor((f) => f.t === 'CHANNEL_CREATE' && f.d.id === created.body.id, 10_000)
    await post(created.body.id, 'in the new channel')
    await socket.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.content === 'in the new channel', 10_000)
    expect((await call(a, 'DELETE', `/channels/${created.body.id}`, owner.token)).status).toBe(200)
    await socket.waitFor((f) => f.t === 'CHANNEL_DELETE' && f.d.id === created.body.id, 10_000)

    // Removed: nothing said after it reaches the member (the rename after it, on the guild's topic, does).
    expect((await setEveryone(allowed & ~VIEW_CHANNEL)).status).toBe(200)
    await post(channelId, 'after being removed')
    expect((await call(a, 'PATCH', `/guilds/${guildId}`, owner.token, { name: 'Large guild, renamed' })).status).toBe(
      200,
    )
    await socket.waitFor((f) => f.t === 'GUILD_UPDATE' && f.d.name === 'Large guild, renamed', 10_000)
    expect(said()).toEqual(['allowed', 'in the new channel'])

    expect((await call(a, 'DELETE', `/guilds/${guildId}`, owner.token)).status).toBe(204)
    await socket.waitFor((f) => f.t === 'GUILD_DELETE' && f.d.id === guildId, 10_000)
  }, 60_000)

  test('a re-follow waits for the transaction that holds a channel’s lock (its subscription calls come after that commit)', async () => {
    const [a] = cluster.nodes
    const owner = await cluster.newUser()
    const guild = await call(a, 'POST', '/guilds', owner.token, { name: 'Locked channel' })
    const guildId = guild.body.id as string
    const channels = await call(a, 'GET', `/guilds/${guildId}/channels`, owner.token)
    const channelId = channels.body.find((ch: { type: number }) => ch.type === 0).id as string
    let answered = false
    let changed: Promise<{ status: number }> | undefined
    // Only the subscription calls name the channel (the role's update goes to the guild's topic).
    await cluster.database.sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`channel:${channelId}`}, 0))`
      changed = call(a, 'PATCH', `/guilds/${guildId}/roles/${guildId}`, owner.token, { permissions: '0' }).then((r) => {
        answered = true
        return r
      })
      await Bun.sleep(500)
      expect(answered).toBe(false)
    })
    expect((await changed!).status).toBe(200)
  }, 60_000)
})
