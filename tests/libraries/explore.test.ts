import { test } from 'bun:test'
import { ChannelType, Client, GatewayIntentBits, PermissionFlagsBits } from 'discord.js'
import { addMember } from '../../src/guilds/lifecycle'
import { cachedGuild } from '../../src/guilds/store'
import { api, makeApp, server } from '../helpers'
import { join, makeGuild } from '../guilds/helpers'

const step = async (name: string, fn: () => Promise<unknown>) => {
  try {
    const r: any = await fn()
    console.log('OK', name, r?.constructor?.name ?? r)
  } catch (e: any) {
    console.log('FAIL', name, e?.message, e?.rawError ? JSON.stringify(e.rawError) : '', e?.url ?? '')
  }
}
test('explore', async () => {
  const { url } = await server()
  const app = await makeApp()
  const bot = (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body
  const { owner, guild, channelId } = await makeGuild('djs guild')
  await addMember((await cachedGuild(guild.id))!, bot.id)
  const role = await api('POST', `/guilds/${guild.id}/roles`, {
    token: owner.token,
    body: { name: 'bot', permissions: String(8) },
  })
  await api('PUT', `/guilds/${guild.id}/members/${bot.id}/roles/${role.body.id}`, { token: owner.token })
  const other = await join(channelId, owner)
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers, GatewayIntentBits.GuildMessages],
    rest: { api: `${url}/api` },
  })
  client.on('warn', (m) => console.log('WARN', m))
  client.on('error', (m) => console.log('ERROR', m))
  const ready = new Promise((r) => client.once('clientReady', r))
  await client.login(app.bot_token)
  await ready
  const g = client.guilds.cache.get(guild.id)!
  const ch: any = g.channels.cache.get(channelId)!
  await step('guild.fetch', async () => {
    const f = await g.fetch()
    console.log(f.approximateMemberCount, f.memberCount)
  })
  await step('guilds.fetch', async () => client.guilds.fetch())
  await step('guild.fetch by id', async () => client.guilds.fetch({ guild: guild.id, force: true }))
  await step('roles.fetch', async () => g.roles.fetch())
  await step('role edit', async () => {
    const r = await g.roles.create({ name: 'x', color: 0xff0000, permissions: [PermissionFlagsBits.SendMessages] })
    await r.edit({ name: 'y', hoist: true })
    await r.setPosition(1).catch((e) => console.log('setPosition', e.message, e.url))
    await r.delete()
  })
  await step('invite', async () => {
    const i = await ch.createInvite({ maxAge: 0 })
    console.log(i.code, i.url)
    return g.invites.fetch().catch((e: any) => console.log('invites.fetch', e.message, e.url))
  })
  await step('channel.fetch', async () => ch.fetch(true))
  await step('client.channels.fetch', async () => client.channels.fetch(channelId, { force: true }))
  await step('guild.edit', async () => g.edit({ name: 'renamed' }))
  await step('overwrite', async () => ch.permissionOverwrites.edit(other.id, { SendMessages: false }))
  await step('ban', async () => g.members.ban(other.id, { reason: 'x' }))
  await step('bans.fetch', async () => g.bans.fetch())
  await step('unban', async () => g.members.unban(other.id))
  await step('timeout', async () => {
    const m = await g.members.fetch(other.id)
    await m.timeout(60_000)
    console.log(m.communicationDisabledUntil)
  })
  await step('user edit', async () => client.user!.setUsername('newbotname'))
  await step('dm', async () => (await client.users.fetch(other.id)).send('hi'))
  await step('webhooks', async () => ch.fetchWebhooks())
  await step('thread', async () => ch.threads.create({ name: 't' }))
  await step('emojis', async () => g.emojis.fetch())
  await step('audit', async () => g.fetchAuditLogs())
  await step('prune', async () => g.members.prune({ dry: true }))
  await step('search', async () => g.members.search({ query: other.username.slice(0, 3) }))
  await step('list', async () => g.members.list({ limit: 10 }))
  await step('voice region', async () => client.fetchVoiceRegions())
  await step('guild preview', async () => g.fetchPreview())
  await step('guild leave', async () => g.leave())
  await client.destroy()
}, 60000)
