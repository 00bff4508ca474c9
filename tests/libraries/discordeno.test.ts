// Discordeno (@discordeno/bot: createBot, with its REST manager and gateway manager) against the server, with only
// the REST base URL changed: the Gateway's address comes from GET /gateway/bot, as bot.start() asks for it.
import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { createBot, GatewayIntents, ShardState } from '@discordeno/bot'
import { config, setConfig } from '../../src/config'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { api, resetWorld, server } from '../helpers'
import { botInGuild as botInGuildOf } from '../guilds/helpers'
import { until } from './waits'

// The pacing and the 429 are the route limits' (off elsewhere in the suite: tests/preload.ts). The heartbeat interval
// is Discord's: Discordeno keeps two of the Gateway's 120 frames a minute per heartbeat, and at the suite's 1 s it has
// none left (its shard then spins forever on the Resume it cannot send).
let previous: ReturnType<typeof config>
beforeAll(async () => {
  await server()
  previous = config()
  setConfig({ ...previous, routeRateLimits: true, gatewayHeartbeatMs: 41_250 })
})
afterAll(() => {
  const { routeRateLimits, gatewayHeartbeatMs } = previous
  setConfig({ ...config(), routeRateLimits, gatewayHeartbeatMs })
})

type Bot = ReturnType<typeof discordeno>['bot']
let running: Bot | undefined
afterEach(async () => {
  await running?.shutdown()
  running = undefined
  resetWorld()
})

type Seen = { event: string; id: string; data: Record<string, any> }

/** A bot as a Discordeno user writes one: the events it handles, the properties it wants its objects to keep. */
function discordeno(token: string, baseUrl: string) {
  const seen: Seen[] = []
  const logs: string[] = []
  const keep = (...args: unknown[]) => void logs.push(args.map(String).join(' '))
  const record = (event: string, id: bigint, data: Record<string, any>) =>
    void seen.push({ event, id: String(id), data })
  const bot = createBot({
    token,
    intents: GatewayIntents.Guilds | GatewayIntents.GuildMessages | GatewayIntents.MessageContent,
    desiredProperties: {
      user: { id: true, username: true },
      guild: { id: true, name: true, members: true, channels: true },
      channel: { id: true, name: true },
      member: { id: true, roles: true },
      message: { id: true, content: true, channelId: true, guildId: true, author: true, member: true },
    },
    events: {
      ready: (ready) => record('ready', ready.user.id, { guilds: ready.guilds.map(String) }),
      guildCreate: (guild) =>
        record('guildCreate', guild.id, { name: guild.name, members: [...(guild.members?.keys() ?? [])].map(String) }),
      messageCreate: (message) =>
        record('messageCreate', message.id, {
          content: message.content,
          channelId: String(message.channelId),
          guildId: String(message.guildId),
          authorId: String(message.author.id),
          memberRoles: message.member?.roles?.map(String),
        }),
      raw: (packet) => void (packet.t === 'RESUMED' && record('resumed', 0n, {})),
    },
    loggerFactory: () => ({ debug: keep, info: keep, warn: keep, error: keep, fatal: keep }) as never,
  })
  // Against a base URL given at creation (rest.proxy.baseUrl) Discordeno sends plainly, as to a REST proxy that
  // paces for it; set here, it is the API's address and the manager paces itself as it does against Discord.
  bot.rest.baseUrl = `${baseUrl}/api`
  // Its wait between the identifies of several shards (5.3 s): there is one shard.
  bot.gateway.spawnShardDelay = 0
  return { bot, seen, logs }
}

/** A bot user in a guild with a text channel. */
async function botInGuild() {
  const { url } = await server()
  const { app, bot: user, owner, guild, channelId } = await botInGuildOf('Discordeno guild')
  return { url, app, user, owner, guild, channelId }
}

const rateLimited = (logs: string[]) => logs.filter((l) => l.includes('was ratelimited')).length

test('createBot starts a shard: READY, GUILD_CREATE, a guild message and its event, a resume after a dropped socket', async () => {
  const { url, app, user, owner, guild, channelId } = await botInGuild()
  const { bot, seen } = discordeno(app.bot_token, url)
  running = bot
  await bot.start()
  expect(bot.gateway.connection.url).toBe(`${config().baseUrl.replace('http', 'ws')}/gateway`)
  expect(seen.find((s) => s.event === 'ready')).toEqual({ event: 'ready', id: user.id, data: { guilds: [guild.id] } })
  const created = await until(() => seen.find((s) => s.event === 'guildCreate'), 'guildCreate')
  expect(created).toEqual({
    event: 'guildCreate',
    id: guild.id,
    data: { name: 'Discordeno guild', members: [user.id] },
  })

  // A message sent through its REST manager comes back as messageCreate, with the author's member.
  const sent = await bot.rest.sendMessage(channelId, { content: 'hello from Discordeno' })
  const message = await until(() => seen.find((s) => s.event === 'messageCreate' && s.id === sent.id), 'it')
  expect(message.data).toEqual({
    content: 'hello from Discordeno',
    channelId,
    guildId: guild.id,
    authorId: user.id,
    memberRoles: [],
  })

  // The socket drops (no close frame: 1006 on the client); a message posted meanwhile comes with the resume.
  const shard = bot.gateway.shards.get(0)!
  const sessionId = shard.sessionId
  for (const session of sessionsOfUser(user.id)) session.ws?.terminate()
  const away = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'away' } })
  await until(() => seen.find((s) => s.event === 'resumed'), 'resumed')
  const after = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'after' } })
  await until(() => seen.find((s) => s.event === 'messageCreate' && s.id === after.body.id), 'the message after')
  expect(seen.filter((s) => s.event === 'messageCreate' && s.id === away.body.id)).toHaveLength(1)
  expect(seen.filter((s) => s.event === 'ready')).toHaveLength(1) // resumed, not identified again
  expect(shard.state).toBe(ShardState.Connected)
  expect(shard.sessionId).toBe(sessionId)
})

test('the REST manager paces itself by the rate-limit headers, waits out a 429, and surfaces form errors', async () => {
  const { url, app, user, channelId } = await botInGuild()
  const { bot, logs } = discordeno(app.bot_token, url)
  const lobby = await bot.rest.post<{ id: string }>('/lobbies', { body: { metadata: { from: 'Discordeno' } } })

  // 21 at once against the route's 10 per second: queued and spread over three windows, without a 429.
  const start = performance.now()
  const sent = await Promise.all(
    Array.from({ length: 21 }, (_, i) =>
      bot.rest.post<{ content: string }>(`/lobbies/${lobby.id}/messages`, { body: { content: `m${i}` } }),
    ),
  )
  expect(sent.map((m) => m.content).sort()).toEqual(Array.from({ length: 21 }, (_, i) => `m${i}`).sort())
  expect(rateLimited(logs)).toBe(0)
  expect(performance.now() - start).toBeGreaterThanOrEqual(1000)

  // The bucket spent by another client: the manager meets the 429, waits X-RateLimit-Reset-After, and sends again.
  const other = await bot.rest.post<{ id: string }>('/lobbies', { body: {} })
  const post = () =>
    api('POST', `/lobbies/${other.id}/messages`, {
      token: `Bot ${app.bot_token}`,
      body: { content: 'other' },
      rateLimited: 'return',
    })
  for (let r = await post(); !(r.status === 429 && r.body.retry_after > 0.3); r = await post());
  const waited = await bot.rest.post<{ content: string; author: { id: string } }>(`/lobbies/${other.id}/messages`, {
    body: { content: 'after the wait' },
  })
  expect(waited).toMatchObject({ content: 'after the wait', author: { id: user.id } })
  expect(rateLimited(logs)).toBe(1)

  // A form error rejects with Discord's status and body.
  const error: any = await bot.rest.sendMessage(channelId, { content: 'x'.repeat(2001) }).catch((e) => e)
  expect(error.cause).toMatchObject({ ok: false, status: 400 })
  expect(JSON.parse(error.cause.body)).toMatchObject({ code: 50035, errors: { content: expect.any(Object) } })
})
