import { afterEach, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { addMember } from '../../src/guilds/lifecycle'
import { cachedGuild } from '../../src/guilds/store'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { join, makeGuild } from './helpers'

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
