// Eris 0.18 (its `Client`) against the server, unchanged. Its REST client speaks only HTTPS, to `rest.domain` on the
// port of its `rest.agent` (node's https.request), so it reaches the server through a TLS front, as it would through
// an operator's reverse proxy (tests/libraries/tls-front.ts); the Gateway's address comes from GET /gateway/bot, to
// which it appends `/` and its query (`/gateway/?v=10&encoding=json`: security issue 40, finding 5), and it connects
// there directly. It logs in as a bot (READY with its `private_channels`, the guild), hears a member's message, sends
// one through its REST client, and resumes after a dropped socket.
import { afterEach, describe, expect, test } from 'bun:test'
import { Client, type Message, type PossiblyUncachedTextableChannel } from 'eris'
import { config } from '../../src/config'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { botInGuild } from '../guilds/helpers'
import { api, resetWorld, server } from '../helpers'
import { canMakeCertificate, type TlsFront, tlsFront } from './tls-front'
import { within, until } from './waits'

let client: Client | undefined
let front: TlsFront | undefined
afterEach(() => {
  client?.disconnect({ reconnect: false })
  client = undefined
  front?.stop()
  front = undefined
  resetWorld()
})

describe.skipIf(!canMakeCertificate)('Eris', () => {
  test('a bot logs in at /gateway/ (READY, its guild), hears a message, sends one, and resumes after a dropped socket', async () => {
    const { url } = await server()
    front = await tlsFront(url)
    const { app, bot, owner, guild, channelId } = await botInGuild('Eris guild')
    client = new Client(`Bot ${app.bot_token}`, {
      intents: ['guilds', 'guildMessages', 'messageContent'],
      rest: { domain: '127.0.0.1', agent: front.agent },
    })
    const said: string[] = []
    client.on('warn', (message) => said.push(`warn ${message}`))
    client.on('error', (error) => said.push(`error ${error}`))
    const messages: Message<PossiblyUncachedTextableChannel>[] = []
    client.on('messageCreate', (message) => void messages.push(message))
    let resumed = 0
    client.on('shardResume', () => void resumed++)
    const ready = new Promise<void>((resolve) => client!.once('ready', () => resolve()))
    await client.connect()
    await within(ready, 10_000, () => `READY (it said: ${JSON.stringify(said)})`)
    expect(client.gatewayURL).toBe(`${config().baseUrl.replace('http', 'ws')}/gateway/?v=10&encoding=json`)
    expect(client.user.id).toBe(bot.id)
    expect(client.user.bot).toBe(true)
    expect(client.application?.id).toBe(app.id) // set after READY's private_channels are read
    const cached = client.guilds.get(guild.id)!
    expect(cached.name).toBe('Eris guild')
    expect(cached.roles.get(guild.id)?.name).toBe('@everyone')

    // A member's message reaches it as messageCreate, with its content (MESSAGE_CONTENT).
    const posted = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'hi' } })
    expect(posted.status).toBe(200)
    const heard = await until(() => messages.find((m) => m.id === posted.body.id), 'messageCreate')
    expect([heard.content, heard.channel.id, heard.guildID, heard.author.id]).toEqual([
      'hi',
      channelId,
      guild.id,
      owner.id,
    ])

    // Its REST client sends one (through the front); the server holds it, as the bot's.
    const sent = await client.createMessage(channelId, 'hello from Eris')
    expect(sent.author.id).toBe(bot.id)
    const held = await api('GET', `/channels/${channelId}/messages/${sent.id}`, { token: owner.token })
    expect([held.status, held.body.content, held.body.author.id]).toEqual([200, 'hello from Eris', bot.id])

    // The socket drops (no close frame: 1006 on its side); a message posted meanwhile comes with the resume.
    const shard = client.shards.get(0)!
    const sessionId = shard.sessionID
    for (const session of sessionsOfUser(bot.id)) session.ws?.terminate()
    const away = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'away' } })
    await until(() => (resumed > 0 ? true : undefined), 'a resume', 10_000)
    expect(shard.sessionID).toBe(sessionId)
    await until(() => messages.find((m) => m.id === away.body.id), 'the message posted while it was away')
    // What it said besides: the drop, and that the Gateway's sequence is shared (it numbers every session's dispatches).
    const expected = (s: string) =>
      s.startsWith('warn Non-consecutive sequence') || s === 'error Error: Connection reset by peer'
    expect(said.filter((s) => !expected(s))).toEqual([])
  }, 30_000)
})
