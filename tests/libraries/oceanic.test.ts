// Oceanic.js 1.15 (its `Client`) against the server, unchanged: pointed at us by the REST base URL alone
// (`rest.baseURL`), the Gateway's address from GET /gateway/bot, to which it appends `/` and its query
// (`/gateway/?v=10&encoding=json`: security issue 40, finding 5). It logs in as a bot (READY, the guild with its
// roles), hears a member's message, sends one through its REST client, and resumes after a dropped socket.
import { afterEach, expect, test } from 'bun:test'
import { Client, type Message } from 'oceanic.js'
import { config } from '../../src/config'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { botInGuild } from '../guilds/helpers'
import { api, resetWorld, server } from '../helpers'
import { within, until } from './waits'

let client: Client | undefined
afterEach(() => {
  client?.disconnect(false)
  client = undefined
  resetWorld()
})

test('a bot logs in at /gateway/ (READY, its guild), hears a message, sends one, and resumes after a dropped socket', async () => {
  const { url } = await server()
  const { app, bot, owner, guild, channelId } = await botInGuild('Oceanic guild')
  client = new Client({
    auth: `Bot ${app.bot_token}`,
    rest: { baseURL: `${url}/api/v10` },
    gateway: { intents: ['GUILDS', 'GUILD_MESSAGES', 'MESSAGE_CONTENT'] },
  })
  const said: string[] = []
  client.on('warn', (message) => said.push(`warn ${message}`))
  client.on('error', (error) => said.push(`error ${error}`))
  const messages: Message[] = []
  client.on('messageCreate', (message) => void messages.push(message as Message))
  let resumed = 0
  client.on('shardResume', () => void resumed++)
  const ready = new Promise<void>((resolve) => client!.once('ready', () => resolve()))
  await client.connect()
  await within(ready, 10_000, () => `READY (it said: ${JSON.stringify(said)})`)
  const shard = client.shards.get(0)!
  expect(shard.ws?.url).toBe(`${config().baseUrl.replace('http', 'ws')}/gateway/?v=10&encoding=json`)
  expect(client.user.id).toBe(bot.id)
  expect(client.user.bot).toBe(true)
  const cached = client.guilds.get(guild.id)!
  expect(cached.name).toBe('Oceanic guild')
  expect(cached.roles.get(guild.id)?.name).toBe('@everyone')

  // A member's message reaches it as messageCreate, with its content (MESSAGE_CONTENT).
  const posted = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'hi' } })
  expect(posted.status).toBe(200)
  const heard = await until(() => messages.find((m) => m.id === posted.body.id), 'messageCreate')
  expect([heard.content, heard.channelID, heard.guildID, heard.author.id]).toEqual([
    'hi',
    channelId,
    guild.id,
    owner.id,
  ])

  // Its REST client sends one; the server holds it, as the bot's.
  const sent = await client.rest.channels.createMessage(channelId, { content: 'hello from Oceanic' })
  expect(sent.author.id).toBe(bot.id)
  const held = await api('GET', `/channels/${channelId}/messages/${sent.id}`, { token: owner.token })
  expect([held.status, held.body.content, held.body.author.id]).toEqual([200, 'hello from Oceanic', bot.id])

  // The socket drops (no close frame: 1006 on its side); a message posted meanwhile comes with the resume.
  const sessionId = shard.sessionID
  for (const session of sessionsOfUser(bot.id)) session.ws?.terminate()
  const away = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'away' } })
  await until(() => (resumed > 0 ? true : undefined), 'a resume', 10_000)
  expect(shard.sessionID).toBe(sessionId)
  await until(() => messages.find((m) => m.id === away.body.id), 'the message posted while it was away')
  // What it said besides: only that the Gateway's sequence is shared (it numbers the dispatches of every session).
  expect(said.filter((s) => !s.startsWith('warn Non-consecutive sequence'))).toEqual([])
}, 30_000)
