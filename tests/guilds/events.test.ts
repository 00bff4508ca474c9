import { afterEach, describe, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { insertUser } from '../../src/accounts/store'
import { snowflake } from '../../src/core/snowflake'
import { transaction } from '../../src/db/client'
import { addMember } from '../../src/guilds/lifecycle'
import { cachedGuild, insertMember } from '../../src/guilds/store'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { botInGuild, join, makeGuild } from './helpers'

const open: GatewayClient[] = []
afterEach(() => {
  open.splice(0).forEach((c) => c.close())
  resetWorld()
})
async function connected(token: string) {
  const { client, ready } = await GatewayClient.identified(token)
  open.push(client)
  return { client, ready }
}

test("READY lists the user's guilds with channels", async () => {
  const { owner, guild } = await makeGuild()
  const { ready } = await connected(owner.token)
  const listed = ready.guilds.find((g: { id: string }) => g.id === guild.id)
  expect(listed.channels.length).toBe(2)
  expect(listed.member_count).toBe(1)
  expect(listed.members.map((m: { user: { id: string } }) => m.user.id)).toEqual([owner.id])
})

test('a bot gets its guilds as Discord gives them to bots: unavailable in READY, then a GUILD_CREATE each', async () => {
  const { owner, guild, channelId } = await makeGuild()
  const app = await makeApp()
  const botUser = (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body
  await addMember((await cachedGuild(guild.id))!, botUser.id)
  const { client, ready } = await connected(`Bot ${app.bot_token}`)
  expect(ready.guilds).toEqual([{ id: guild.id, unavailable: true }])
  const created = await client.waitFor('GUILD_CREATE')
  expect(created.s).toBe(client.dispatches('READY')[0].s! + 1)
  expect(created.d).toMatchObject({ id: guild.id, unavailable: false, channels: [{ id: channelId }, {}] })
  // Every field of Discord's guild object, which strict libraries (serenity, JDA) require, and GUILD_CREATE's lists.
  expect(created.d).toMatchObject({
    afk_channel_id: null,
    afk_timeout: 300,
    system_channel_id: null,
    system_channel_flags: 0,
    splash: null,
    banner: null,
    emojis: [],
    stickers: [],
    premium_progress_bar_enabled: false,
    voice_states: [],
    presences: [],
    threads: [],
    stage_instances: [],
    guild_scheduled_events: [],
  })
  // Itself among the members (discord.py's guild.me), and the author's member on its messages.
  expect(created.d.members).toEqual([expect.objectContaining({ user: expect.objectContaining({ id: botUser.id }) })])
  await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'hi bot' } })
  const message = (await client.waitFor('MESSAGE_CREATE')).d
  expect(message.author.id).toBe(owner.id)
  expect(message.member).toMatchObject({ roles: [], joined_at: expect.any(String) })
  expect(message.member.user).toBeUndefined()
})

test('joining: GUILD_CREATE to the joiner, GUILD_MEMBER_ADD to members, live subscription to messages', async () => {
  const { owner, guild, channelId } = await makeGuild()
  const outsider = await makeUser()
  const newcomer = await makeUser()
  const o = (await connected(owner.token)).client
  const n = (await connected(newcomer.token)).client
  const x = (await connected(outsider.token)).client
  await join(channelId, owner, newcomer)
  expect((await n.waitFor('GUILD_CREATE')).d.id).toBe(guild.id)
  expect((await o.waitFor('GUILD_MEMBER_ADD')).d).toMatchObject({ guild_id: guild.id, user: { id: newcomer.id } })
  await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'welcome' } })
  expect((await n.waitFor('MESSAGE_CREATE')).d).toMatchObject({
    content: 'welcome',
    channel_id: channelId,
    guild_id: guild.id,
  })
  await o.waitFor('MESSAGE_CREATE')
  await x.expectNo('MESSAGE_CREATE')
  await x.expectNo('GUILD_MEMBER_ADD', 50)
})

test('losing VIEW_CHANNEL stops MESSAGE_CREATE without reconnecting; leaving sends GUILD_DELETE', async () => {
  const { owner, guild, channelId } = await makeGuild()
  const member = await join(channelId, owner)
  const m = (await connected(member.token)).client
  await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, { token: owner.token, body: { permissions: '0' } })
  await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'secret' } })
  await m.expectNo('MESSAGE_CREATE')
  await api('PATCH', `/guilds/${guild.id}/roles/${guild.id}`, {
    token: owner.token,
    body: { permissions: String((1 << 10) | (1 << 11)) },
  })
  await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'visible' } })
  expect((await m.waitFor('MESSAGE_CREATE')).d.content).toBe('visible')
  await api('DELETE', `/users/@me/guilds/${guild.id}`, { token: member.token })
  expect((await m.waitFor('GUILD_DELETE')).d).toEqual({ id: guild.id })
  await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'after leaving' } })
  await m.expectNo('MESSAGE_CREATE')
})

test('channel and guild updates reach members only', async () => {
  const { owner, guild, channelId } = await makeGuild()
  const member = await join(channelId, owner)
  const outsider = await makeUser()
  const m = (await connected(member.token)).client
  const x = (await connected(outsider.token)).client
  const created = await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'news' } })
  expect((await m.waitFor('CHANNEL_CREATE')).d.id).toBe(created.body.id)
  await api('PATCH', `/channels/${created.body.id}`, { token: owner.token, body: { topic: 'today' } })
  expect((await m.waitFor('CHANNEL_UPDATE')).d.topic).toBe('today')
  await api('PATCH', `/guilds/${guild.id}`, { token: owner.token, body: { name: 'New Name' } })
  expect((await m.waitFor('GUILD_UPDATE')).d.name).toBe('New Name')
  await api('DELETE', `/channels/${created.body.id}`, { token: owner.token })
  await m.waitFor('CHANNEL_DELETE')
  for (const t of ['CHANNEL_CREATE', 'CHANNEL_UPDATE', 'GUILD_UPDATE']) await x.expectNo(t, 30)
  await api('DELETE', `/guilds/${guild.id}`, { token: owner.token })
  expect((await m.waitFor('GUILD_DELETE')).d.id).toBe(guild.id)
})

describe('op 8 Request Guild Members: GUILD_MEMBERS_CHUNK to the asking session', () => {
  /** A guild with its owner, a bot in it, a member with a nickname and one without. */
  async function world() {
    const { owner, guild, channelId, app, bot } = await botInGuild()
    const nicked = await join(channelId, owner)
    const plain = await join(channelId, owner)
    await api('PATCH', `/guilds/${guild.id}/members/${nicked.id}`, { token: owner.token, body: { nick: 'Zed' } })
    const { client } = await connected(`Bot ${app.bot_token}`)
    await client.waitFor('GUILD_CREATE')
    return { owner, guild, bot, nicked, plain, client }
  }
  const chunk = async (client: GatewayClient, d: Record<string, unknown>) => {
    client.send(8, d)
    return (await client.waitFor((f) => f.t === 'GUILD_MEMBERS_CHUNK' && f.d.nonce === d.nonce)).d
  }
  const ids = (members: { user: { id: string } }[]) => members.map((m) => m.user.id)
  const byId = (a: string, b: string) => (BigInt(a) < BigInt(b) ? -1 : 1)

  test('every member ("" with limit 0), by user ids with not_found, by a name prefix, up to a limit', async () => {
    const { owner, guild, bot, nicked, plain, client } = await world()
    const all = await chunk(client, { guild_id: guild.id, query: '', limit: 0, nonce: 'all' })
    expect(all).toMatchObject({ guild_id: guild.id, chunk_index: 0, chunk_count: 1, nonce: 'all' })
    expect(ids(all.members)).toEqual([owner.id, bot.id, nicked.id, plain.id].sort(byId))
    expect(all.not_found).toBeUndefined()
    expect(all.presences).toBeUndefined()
    // Each member as GET /guilds/{id}/members/{id} answers it.
    const one = await api('GET', `/guilds/${guild.id}/members/${nicked.id}`, { token: owner.token })
    expect(all.members.find((m: { nick: string | null }) => m.nick === 'Zed')).toEqual(one.body)

    const outsider = (await makeUser()).id
    const some = await chunk(client, { guild_id: guild.id, user_ids: [plain.id, outsider], nonce: 'ids' })
    expect([ids(some.members), some.not_found]).toEqual([[plain.id], [outsider]])
    const single = await chunk(client, { guild_id: guild.id, user_ids: nicked.id, presences: true, nonce: 'one' })
    expect([ids(single.members), single.presences]).toEqual([[nicked.id], []])

    // A prefix of the username or the nickname, any case; the limit.
    const zed = await chunk(client, { guild_id: guild.id, query: 'zE', limit: 10, nonce: 'nick' })
    expect(ids(zed.members)).toEqual([nicked.id])
    const named = await chunk(client, { guild_id: guild.id, query: plain.username.toUpperCase(), limit: 1, nonce: 'u' })
    expect(ids(named.members)).toEqual([plain.id])
    const two = await chunk(client, { guild_id: guild.id, query: '', limit: 2, nonce: 'two' })
    expect(ids(two.members)).toEqual(ids(all.members).slice(0, 2))
    const none = await chunk(client, { guild_id: guild.id, query: 'no such name', limit: 5, nonce: 'none' })
    expect([none.members, none.chunk_count]).toEqual([[], 1])
  })

  test('1000 members a chunk; a guild the caller is not in and a frame that asks nothing are passed over', async () => {
    const { guild, client, owner } = await world()
    const users = Array.from({ length: 1000 }, () => snowflake())
    for (const id of users) await insertUser({ id, username: `bulk${id}`, createdAt: Date.now() })
    await transaction(async (tx) => {
      for (const userId of users) await insertMember(tx, { guildId: guild.id, userId, joinedAt: Date.now() })
    })
    client.send(8, { guild_id: guild.id, query: '', limit: 0, nonce: 'big' })
    const second = await client.waitFor((f) => f.t === 'GUILD_MEMBERS_CHUNK' && f.d.chunk_index === 1)
    const first = client.dispatches('GUILD_MEMBERS_CHUNK').find((f) => f.d.chunk_index === 0)!
    expect([first.d.members.length, second.d.members.length]).toEqual([1000, 4])
    expect([first.d.chunk_count, second.d.chunk_count, second.d.nonce]).toEqual([2, 2, 'big'])

    const elsewhere = await makeGuild()
    client.send(8, { guild_id: elsewhere.guild.id, query: '', limit: 0, nonce: 'not mine' })
    client.send(8, { guild_id: guild.id, nonce: 'asks nothing' })
    client.send(8, { guild_id: 'x', query: '', limit: 0 })
    // A nonce over 32 bytes is not echoed.
    client.send(8, { guild_id: guild.id, user_ids: [owner.id], nonce: 'n'.repeat(33) })
    const last = await client.waitFor((f) => f.t === 'GUILD_MEMBERS_CHUNK' && f.d.members.length === 1)
    expect([ids(last.d.members), last.d.nonce]).toEqual([[owner.id], undefined])
    expect(client.dispatches('GUILD_MEMBERS_CHUNK')).toHaveLength(3)
  })
})
