// discord.js v14 (its `Client`, the library most bots are written with) against the server, unchanged: the bot is
// pointed at us as a self-hoster would (`rest: { api }`), and the Gateway's address comes from GET /gateway/bot as
// Discord's does. Its first minutes go through its whole cache machinery (READY, the guilds' GUILD_CREATE with
// channels, roles and the bot's member, the application), then it does what a typical bot does. Each step is
// asserted on what the library returns and on what the server holds or another member's socket sees.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import {
  ActivityType,
  ApplicationCommandType,
  ChannelType,
  Client,
  EmbedBuilder,
  EmbedType,
  Events,
  GatewayIntentBits,
  type GuildMember,
  type Message,
  MessageType,
  Partials,
  PermissionFlagsBits,
  type TextChannel,
} from 'discord.js'
import { config } from '../../src/config'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { type GatewayClient, tracked } from '../gateway-client'
import { api, resetWorld, server } from '../helpers'
import { botInGuild, join } from '../guilds/helpers'

const sockets = tracked()
let client: Client
/** What the library said besides its events: a warning or an error is a field it expected and did not get. */
const said: string[] = []
let world: Awaited<ReturnType<typeof makeWorld>>

/** Waits for the client's next `event` that `match` accepts (5 s at most). */
function next<T extends unknown[]>(event: string, match: (...args: T) => boolean = () => true, ms = 5000) {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off(event, listener)
      reject(new Error(`no ${event} within ${ms} ms`))
    }, ms)
    const listener = (...args: T) => {
      if (!match(...args)) return
      clearTimeout(timer)
      client.off(event, listener)
      resolve(args)
    }
    client.on(event, listener as never)
  })
}

/**
 * A guild owned by a user, with the bot in it under a role that lets it moderate (placed above the `members` role it
 * hands out, as a bot's role is), a member, and the owner's socket as the second observer.
 */
async function makeWorld() {
  const { url } = await server()
  const { app, bot, owner, guild, channelId } = await botInGuild('discord.js guild')
  const role = async (name: string, permissions: bigint) =>
    (
      await api('POST', `/guilds/${guild.id}/roles`, {
        token: owner.token,
        body: { name, permissions: `${permissions}` },
      })
    ).body.id as string
  const botRole = await role(
    'bot',
    PermissionFlagsBits.ManageMessages |
      PermissionFlagsBits.ManageRoles |
      PermissionFlagsBits.ManageNicknames |
      PermissionFlagsBits.ManageChannels |
      PermissionFlagsBits.KickMembers |
      PermissionFlagsBits.BanMembers |
      PermissionFlagsBits.ModerateMembers |
      PermissionFlagsBits.ManageGuild,
  )
  const membersRole = await role('members', 0n) // created at the bottom, below the bot's
  await api('PUT', `/guilds/${guild.id}/members/${bot.id}/roles/${botRole}`, { token: owner.token })
  const member = await join(channelId, owner)
  const before = (
    await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'old' } })
  ).body.id as string
  const watcher = await sockets.identified(owner.token)
  return { url, app, bot, owner, guild, channelId, membersRole, botRole, member, before, watcher }
}

const ownerApi = (method: string, path: string, body?: unknown) => api(method, path, { token: world.owner.token, body })
const text = () => client.channels.cache.get(world.channelId) as TextChannel
const dispatched = (watcher: GatewayClient, type: string, id: string) =>
  watcher.waitFor((f) => f.t === type && (f.d.id ?? f.d.message_id ?? f.d.user?.id) === id)

beforeAll(async () => {
  world = await makeWorld()
  client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMembers,
      GatewayIntentBits.GuildModeration,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.GuildMessageReactions,
      GatewayIntentBits.GuildMessageTyping,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.DirectMessages,
    ],
    partials: [Partials.Message, Partials.Reaction],
    presence: { activities: [{ name: 'the suite', type: ActivityType.Watching }] },
    rest: { api: `${world.url}/api` },
  })
  client.on(Events.Warn, (m) => said.push(`warn: ${m}`))
  client.on(Events.Error, (e) => said.push(`error: ${e.stack ?? e}`))
  client.on(Events.ShardError, (e) => said.push(`shard error: ${e.stack ?? e}`))
})

afterAll(async () => {
  await client?.destroy()
  sockets.closeAll()
  resetWorld()
})

test('login: READY, the client user, the application, and the guild cache from GUILD_CREATE', async () => {
  const { app, bot, guild, channelId, owner, member, botRole, membersRole } = world
  const ready = next<[Client<true>]>(Events.ClientReady)
  expect(await client.login(app.bot_token)).toBe(app.bot_token)
  await ready
  // The Gateway's address is the one GET /gateway/bot gives.
  expect(client.ws.gateway).toBe(`${config().baseUrl.replace('http', 'ws')}/gateway/`)
  expect(client.user!.id).toBe(bot.id)
  expect([client.user!.bot, client.user!.username]).toEqual([true, bot.username])
  const application = await client.application!.fetch()
  expect([application.id, application.name, application.botPublic]).toEqual([app.id, app.name, true])
  // Made by the operator, without an owning account: the owner named is its bot (oauth2/serialize.ts).
  expect(application.owner?.id).toBe(bot.id)

  const cached = client.guilds.cache.get(guild.id)!
  expect([cached.name, cached.ownerId, cached.memberCount, cached.available]).toEqual([
    'discord.js guild',
    owner.id,
    3,
    true,
  ])
  expect(cached.channels.cache.map((c) => [c.id === channelId, c.type]).sort()).toEqual([
    [false, ChannelType.GuildVoice],
    [true, ChannelType.GuildText],
  ])
  expect(cached.roles.cache.map((r) => r.id).sort()).toEqual([guild.id, membersRole, botRole].sort())
  expect(cached.roles.everyone.id).toBe(guild.id)
  // Itself as a member, with its role and what the role allows.
  const me = cached.members.me!
  expect([me.id, me.roles.cache.has(botRole), me.roles.highest.id]).toEqual([bot.id, true, botRole])
  expect(me.permissions.has(PermissionFlagsBits.ManageMessages)).toBe(true)
  expect(text().permissionsFor(me).has(PermissionFlagsBits.SendMessages)).toBe(true)
  expect(me.permissions.has(PermissionFlagsBits.Administrator)).toBe(false)
  expect(cached.members.cache.has(member.id)).toBe(false) // members come by request (below)
  expect(client.isReady()).toBe(true)
})

test('send: text, an embed, a reply with message_reference; each as the server keeps it and the owner sees it', async () => {
  const { channelId, bot, watcher, guild } = world
  const hello = await text().send('hello from discord.js')
  expect([hello.content, hello.author.id, hello.channelId, hello.guildId]).toEqual([
    'hello from discord.js',
    bot.id,
    channelId,
    guild.id,
  ])
  expect((await dispatched(watcher, 'MESSAGE_CREATE', hello.id)).d.content).toBe('hello from discord.js')

  const embed = new EmbedBuilder()
    .setTitle('Match found')
    .setDescription('Two teams of five')
    .setColor(0x5865f2)
    .addFields({ name: 'Map', value: 'Harbour', inline: true })
    .setFooter({ text: 'Lobby 7' })
    .setTimestamp(new Date('2025-01-01T12:00:00Z'))
  const rich = await text().send({ embeds: [embed] })
  expect(rich.embeds[0]!.toJSON()).toEqual({
    type: EmbedType.Rich,
    ...embed.toJSON(),
    timestamp: '2025-01-01T12:00:00.000Z',
  })
  const stored = (await ownerApi('GET', `/channels/${channelId}/messages/${rich.id}`)).body
  expect(stored.embeds).toEqual([rich.embeds[0]!.toJSON()])

  const reply = await hello.reply('a reply')
  expect([reply.type, reply.reference?.messageId, reply.reference?.channelId]).toEqual([
    MessageType.Reply,
    hello.id,
    channelId,
  ])
  expect((await reply.fetchReference()).content).toBe('hello from discord.js')
  const event = (await dispatched(watcher, 'MESSAGE_CREATE', reply.id)).d
  expect([event.type, event.message_reference.message_id, event.referenced_message.id]).toEqual([
    19,
    hello.id,
    hello.id,
  ])
})

test('messageCreate from a user: content (MESSAGE_CONTENT), the author and its member, the bot mentioned', async () => {
  const { channelId, member, bot } = world
  const seen = next<[Message]>(Events.MessageCreate, (m) => m.author.id === member.id)
  const sent = await api('POST', `/channels/${channelId}/messages`, {
    token: member.token,
    body: { content: `hi <@${bot.id}>` },
  })
  const [message] = await seen
  expect([message.id, message.content, message.author.bot, message.member?.id, message.inGuild()]).toEqual([
    sent.body.id,
    `hi <@${bot.id}>`,
    false,
    member.id,
    true,
  ])
  const joined = (await ownerApi('GET', `/guilds/${world.guild.id}/members/${member.id}`)).body.joined_at
  expect(message.member!.joinedTimestamp).toBe(Date.parse(joined))
  // What a bot that answers when mentioned looks at.
  expect(message.mentions.has(client.user!)).toBe(true)
  expect([...message.mentions.users.keys()]).toEqual([bot.id])
  expect(message.mentions.members?.first()?.roles.cache.has(world.botRole)).toBe(true)
  expect(message.mentions.everyone).toBe(false)
})

test('fetch messages, edit, delete, bulk delete: the answers, the events, and what the server keeps', async () => {
  const { channelId, watcher, before } = world
  const page = await text().messages.fetch({ limit: 10 })
  const server = (await ownerApi('GET', `/channels/${channelId}/messages?limit=10`)).body
  expect([...page.keys()]).toEqual(server.map((m: { id: string }) => m.id))
  expect(page.get(before)?.content).toBe('old')
  const one = await text().messages.fetch({ message: before, force: true })
  expect([one.id, one.content, one.author.id]).toEqual([before, 'old', world.owner.id])

  const mine = await text().send('first draft')
  const updated = next<[Message, Message]>(Events.MessageUpdate, (_, m) => m.id === mine.id)
  const edited = await mine.edit('final')
  expect([edited.content, edited.editedTimestamp! > 0]).toEqual(['final', true])
  await updated
  expect((await dispatched(watcher, 'MESSAGE_UPDATE', mine.id)).d.content).toBe('final')
  expect((await ownerApi('GET', `/channels/${channelId}/messages/${mine.id}`)).body.content).toBe('final')

  const deleted = next<[Message]>(Events.MessageDelete, (m) => m.id === mine.id)
  await mine.delete()
  await deleted
  expect((await ownerApi('GET', `/channels/${channelId}/messages/${mine.id}`)).body.code).toBe(10008)

  const a = await text().send('a')
  const b = await text().send('b')
  const bulk = next(Events.MessageBulkDelete)
  const gone = await text().bulkDelete([a, b])
  expect([...gone.keys()].sort()).toEqual([a.id, b.id].sort())
  await bulk
  const event = await watcher.waitFor((f) => f.t === 'MESSAGE_DELETE_BULK' && f.d.ids.includes(a.id))
  expect(event.d.ids.sort()).toEqual([a.id, b.id].sort())
  for (const id of [a.id, b.id])
    expect((await ownerApi('GET', `/channels/${channelId}/messages/${id}`)).status).toBe(404)
})

test('reactions: react, the reaction and its users; a partial reaction on an uncached message fetched whole', async () => {
  const { channelId, watcher, owner, bot, before } = world
  const message = await text().send('react to me')
  const added = next<[{ emoji: { name: string }; count: number; me: boolean }, { id: string }]>(
    Events.MessageReactionAdd,
    (_, user) => user.id === bot.id,
  )
  const reaction = await message.react('👍')
  expect([reaction.emoji.name, reaction.count, reaction.me]).toEqual(['👍', 1, true])
  await added
  expect((await dispatched(watcher, 'MESSAGE_REACTION_ADD', message.id)).d).toMatchObject({
    user_id: bot.id,
    emoji: { name: '👍', id: null },
  })
  await ownerApi('PUT', `/channels/${channelId}/messages/${message.id}/reactions/${encodeURIComponent('👍')}/@me`)
  const users = await reaction.users.fetch()
  expect([...users.keys()].sort()).toEqual([bot.id, owner.id].sort())
  const removed = next(Events.MessageReactionRemove)
  await reaction.users.remove(bot.id)
  await removed
  const server = (await ownerApi('GET', `/channels/${channelId}/messages/${message.id}`)).body
  expect(server.reactions).toMatchObject([{ emoji: { id: null, name: '👍' }, count: 1, me: true }])

  // The owner reacts to a message the bot no longer holds (from before its login, swept from its cache since it was
  // fetched above): a partial reaction (Partials.Reaction), fetched whole through GET /channels/{id}/messages/{id}.
  text().messages.cache.delete(before)
  const partial = next<[{ partial: boolean; fetch: () => Promise<{ count: number; message: Message }> }]>(
    Events.MessageReactionAdd,
    (r) => (r as unknown as { message: { id: string } }).message.id === before,
  )
  await ownerApi('PUT', `/channels/${channelId}/messages/${before}/reactions/${encodeURIComponent('🎉')}/@me`)
  const [incomplete] = await partial
  expect(incomplete.partial).toBe(true)
  const whole = await incomplete.fetch()
  expect([whole.count, whole.message.content, whole.message.partial]).toEqual([1, 'old', false])
})

test('pins and typing: pin, fetchPins with the pin time, unpin; sendTyping as TYPING_START', async () => {
  const { channelId, watcher, bot } = world
  const message = await text().send('pin me')
  const pinsUpdate = next(Events.ChannelPinsUpdate)
  await message.pin()
  await pinsUpdate
  expect((await dispatched(watcher, 'MESSAGE_UPDATE', message.id)).d.pinned).toBe(true)
  const pins = await text().messages.fetchPins()
  expect([pins.hasMore, pins.items.map((p) => p.message.id)]).toEqual([false, [message.id]])
  expect(Math.abs(pins.items[0]!.pinnedTimestamp - Date.now())).toBeLessThan(60_000)
  expect((await ownerApi('GET', `/channels/${channelId}/pins`)).body.map((m: { id: string }) => m.id)).toEqual([
    message.id,
  ])
  await message.unpin()
  expect((await text().messages.fetchPins()).items).toEqual([])
  expect((await ownerApi('GET', `/channels/${channelId}/messages/${message.id}`)).body.pinned).toBe(false)

  await text().sendTyping()
  const typing = await watcher.waitFor((f) => f.t === 'TYPING_START' && f.d.user_id === bot.id)
  expect(typing.d).toMatchObject({ channel_id: channelId, guild_id: world.guild.id, member: { user: { id: bot.id } } })
})

test('users and members: fetch one, fetch them all (op 8), roles add and remove, nicknames', async () => {
  const { guild, member, owner, membersRole, bot, watcher } = world
  const user = await client.users.fetch(member.id, { force: true })
  expect([user.id, user.username, user.bot]).toEqual([member.id, member.username, false])
  const cached = client.guilds.cache.get(guild.id)!
  const one = await cached.members.fetch({ user: member.id, force: true })
  expect([one.id, one.roles.cache.size, one.nickname]).toEqual([member.id, 1, null]) // @everyone

  const all = await cached.members.fetch()
  expect([...all.keys()].sort()).toEqual([owner.id, bot.id, member.id].sort())
  const found = await cached.members.fetch({ query: member.username.toUpperCase(), limit: 5 })
  expect([...found.keys()]).toEqual([member.id])

  const updated = next<[GuildMember, GuildMember]>(Events.GuildMemberUpdate, (_, m) => m.roles.cache.has(membersRole))
  await one.roles.add(membersRole)
  const [, after] = await updated
  expect(after.roles.cache.has(membersRole)).toBe(true)
  const server = () => ownerApi('GET', `/guilds/${guild.id}/members/${member.id}`)
  expect((await server()).body.roles).toEqual([membersRole])
  expect((await dispatched(watcher, 'GUILD_MEMBER_UPDATE', member.id)).d.roles).toEqual([membersRole])
  await one.roles.remove(membersRole)
  expect((await server()).body.roles).toEqual([])
  // A role the bot's own does not outrank: Discord's 50013, surfaced as DiscordAPIError.
  const refused: any = await one.roles.add(world.botRole).catch((e) => e)
  expect([refused.status, refused.code]).toEqual([403, 50013])
  await one.roles.set([membersRole])
  expect((await server()).body.roles).toEqual([membersRole])

  const renamed = await one.setNickname('Captain')
  expect(renamed.nickname).toBe('Captain')
  expect((await server()).body.nick).toBe('Captain')
  const me = await cached.members.me!.setNickname('Helper')
  expect([me.nickname, me.displayName]).toEqual(['Helper', 'Helper'])
  expect((await ownerApi('GET', `/guilds/${guild.id}/members/${bot.id}`)).body.nick).toBe('Helper')
})

test('moderation: kick, a timeout, a ban with a reason and its messages, the ban list, unban', async () => {
  const { guild, channelId, owner, watcher } = world
  const cached = client.guilds.cache.get(guild.id)!
  const joined = next<[GuildMember]>(Events.GuildMemberAdd)
  const kicked = await join(channelId, owner)
  expect((await joined)[0].id).toBe(kicked.id)
  const left = next<[GuildMember]>(Events.GuildMemberRemove, (m) => m.id === kicked.id)
  await cached.members.kick(kicked.id)
  await left
  expect((await ownerApi('GET', `/guilds/${guild.id}/members/${kicked.id}`)).body.code).toBe(10007)

  const banned = await join(channelId, owner)
  const spam = await api('POST', `/channels/${channelId}/messages`, { token: banned.token, body: { content: 'spam' } })
  const member = await cached.members.fetch(banned.id)
  // A timeout first: the member reads but cannot post until it ends.
  const timedOut = await member.timeout(60_000, 'cool down')
  expect(timedOut.isCommunicationDisabled()).toBe(true)
  expect(Math.abs(timedOut.communicationDisabledUntilTimestamp! - Date.now() - 60_000)).toBeLessThan(5_000)
  const muted = await api('POST', `/channels/${channelId}/messages`, { token: banned.token, body: { content: 'x' } })
  expect(muted.body.code).toBe(50013)
  expect((await member.timeout(null)).isCommunicationDisabled()).toBe(false)
  const banAdd = next<[{ user: { id: string } }]>(Events.GuildBanAdd)
  await member.ban({ reason: 'spam: 100% of it', deleteMessageSeconds: 3600 })
  expect((await banAdd)[0].user.id).toBe(banned.id)
  expect((await watcher.waitFor((f) => f.t === 'MESSAGE_DELETE_BULK' && f.d.ids.includes(spam.body.id))).d.ids).toEqual(
    [spam.body.id],
  )
  const bans = await cached.bans.fetch()
  expect(bans.map((b) => [b.user.id, b.reason])).toEqual([[banned.id, 'spam: 100% of it']])
  expect((await ownerApi('GET', `/guilds/${guild.id}/bans/${banned.id}`)).body.reason).toBe('spam: 100% of it')
  const banRemove = next(Events.GuildBanRemove)
  await cached.members.unban(banned.id)
  await banRemove
  expect((await ownerApi('GET', `/guilds/${guild.id}/bans`)).body).toEqual([])
})

test('channels (create, edit, delete), an invite, the guild renamed: as the server keeps them and the owner sees them', async () => {
  const { guild, watcher } = world
  const cached = client.guilds.cache.get(guild.id)!
  const created = await cached.channels.create({
    name: 'bot-room',
    type: ChannelType.GuildText,
    topic: 'made by a bot',
  })
  expect([created.name, created.type, created.topic, created.guildId]).toEqual([
    'bot-room',
    ChannelType.GuildText,
    'made by a bot',
    guild.id,
  ])
  expect((await dispatched(watcher, 'CHANNEL_CREATE', created.id)).d.name).toBe('bot-room')
  expect(cached.channels.cache.has(created.id)).toBe(true)
  await created.setPosition(0)
  expect((await ownerApi('GET', `/channels/${created.id}`)).body.position).toBe(0)
  const edited = await created.edit({ name: 'renamed', topic: 'still a bot' })
  expect([edited.name, edited.topic]).toEqual(['renamed', 'still a bot'])
  expect((await ownerApi('GET', `/channels/${created.id}`)).body).toMatchObject({
    name: 'renamed',
    topic: 'still a bot',
  })
  const fetched = await cached.channels.fetch()
  expect(fetched.has(created.id)).toBe(true)
  await created.delete()
  expect((await ownerApi('GET', `/channels/${created.id}`)).body.code).toBe(10003)
  expect(cached.channels.cache.has(created.id)).toBe(false)

  // An invite, the guild's invites, and the guild renamed (MANAGE_GUILD).
  const invite = await text().createInvite({ maxAge: 0, unique: true })
  expect([invite.channelId, invite.maxAge, invite.inviterId]).toEqual([world.channelId, 0, world.bot.id])
  expect((await cached.invites.fetch()).has(invite.code)).toBe(true)
  const renamed = await cached.edit({ name: 'renamed by the bot' })
  expect(renamed.name).toBe('renamed by the bot')
  expect((await watcher.waitFor('GUILD_UPDATE')).d.name).toBe('renamed by the bot')
})

test('slash commands: application.commands.set globally and for the guild, as GET lists them', async () => {
  const { app, guild } = world
  const global = await client.application!.commands.set([
    { name: 'ping', description: 'Replies with pong' },
    { name: 'Report', type: ApplicationCommandType.User },
  ])
  expect(global.map((c) => [c.name, c.type, c.applicationId]).sort()).toEqual([
    ['Report', ApplicationCommandType.User, app.id],
    ['ping', ApplicationCommandType.ChatInput, app.id],
  ])
  const listed = await api('GET', `/applications/${app.id}/commands`, { token: `Bot ${app.bot_token}` })
  expect(listed.body.map((c: { id: string }) => c.id).sort()).toEqual([...global.keys()].sort())
  const local = await client.application!.commands.set([{ name: 'queue', description: 'Join the queue' }], guild.id)
  expect(local.map((c) => [c.name, c.guildId])).toEqual([['queue', guild.id]])
  const fetched = await client.guilds.cache.get(guild.id)!.commands.fetch()
  expect([...fetched.keys()]).toEqual([...local.keys()])
})

test('DMs: user.send() opens the DM and sends; the user sees it, answers, and the bot gets messageCreate', async () => {
  const { member, bot } = world
  const socket = await sockets.identified(member.token)
  const user = await client.users.fetch(member.id)
  const sent = await user.send('hello in private')
  expect([sent.channel.type, sent.inGuild(), sent.author.id, user.dmChannel?.id]).toEqual([
    ChannelType.DM,
    false,
    bot.id,
    sent.channelId,
  ])
  // The user learns of the channel with its first message, then gets the message.
  const created = await socket.waitFor('CHANNEL_CREATE')
  expect(created.d).toMatchObject({ id: sent.channelId, type: 1, recipients: [{ id: bot.id }] })
  const arrived = await socket.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === sent.id)
  expect(arrived.d).toMatchObject({ channel_id: sent.channelId, content: 'hello in private', author: { id: bot.id } })

  const seen = next<[Message]>(Events.MessageCreate, (m) => m.author.id === member.id && !m.inGuild())
  const answer = await api('POST', `/channels/${sent.channelId}/messages`, {
    token: member.token,
    body: { content: 'hi bot' },
  })
  const [message] = await seen
  expect([message.id, message.content, message.channel.type, message.channelId]).toEqual([
    answer.body.id,
    'hi bot',
    ChannelType.DM,
    sent.channelId,
  ])
  // Sending again reuses the DM: one channel.
  expect((await user.send('again')).channelId).toBe(sent.channelId)
})

test('a lobby through client.rest: POST /lobbies, a message, GET /lobbies/{id}', async () => {
  const { bot } = world
  const lobby = (await client.rest.post('/lobbies', { body: { metadata: { mode: 'ranked' } } })) as {
    id: string
    metadata: Record<string, string>
  }
  expect(lobby.metadata).toEqual({ mode: 'ranked' })
  const message = (await client.rest.post(`/lobbies/${lobby.id}/messages`, { body: { content: 'gg' } })) as {
    content: string
    author: { id: string }
  }
  expect([message.content, message.author.id]).toEqual(['gg', bot.id])
  const read = (await client.rest.get(`/lobbies/${lobby.id}`)) as { id: string; metadata: Record<string, string> }
  expect([read.id, read.metadata]).toEqual([lobby.id, { mode: 'ranked' }])
  const messages = (await client.rest.get(`/lobbies/${lobby.id}/messages`)) as { content: string }[]
  expect(messages.map((m) => m.content)).toEqual(['gg'])
})

test('destroy: the session ends on the server; nothing warned or failed on the way', async () => {
  const { bot } = world
  expect(sessionsOfUser(bot.id).length).toBe(1)
  await client.destroy()
  const deadline = Date.now() + 5000
  while (sessionsOfUser(bot.id).length && Date.now() < deadline) await Bun.sleep(10)
  expect(sessionsOfUser(bot.id)).toEqual([])
  expect(client.isReady()).toBe(false)
  expect(said).toEqual([])
})
