// discord.py (Debian's python3-discord, under Debian's /usr/bin/python3) runs a bot against the server with only its
// base URLs changed: tests/libraries/discordpy_bot.py does what a bot does and prints what it saw. The package comes
// from scripts/ensure-python-discord.sh (run by `bun run test`); where it could not be installed the test is skipped,
// saying so, except in CI (CI=true), where it fails.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { config, setConfig } from '../../src/config'
import { sessionsOfUser } from '../../src/gateway/sessions'
import { getGuild } from '../../src/guilds/store'
import { addMember } from '../../src/guilds/lifecycle'
import { api, makeApp, resetWorld, server } from '../helpers'
import { makeGuild } from '../guilds/helpers'

const PYTHON = process.env.DISCORDPY_PYTHON ?? '/usr/bin/python3'
const installed = existsSync(PYTHON) && Bun.spawnSync([PYTHON, '-c', 'import discord']).exitCode === 0
const skip = !installed && process.env.CI !== 'true'
if (skip)
  console.warn(
    `discord.py test skipped: ${PYTHON} cannot import discord (scripts/ensure-python-discord.sh installs Debian's python3-discord)`,
  )

// The pacing and the 429 are the route limits' (off elsewhere in the suite: tests/preload.ts).
let routeRateLimits = false
beforeAll(async () => {
  await server()
  routeRateLimits = config().routeRateLimits
  setConfig({ ...config(), routeRateLimits: true })
})
afterAll(() => {
  setConfig({ ...config(), routeRateLimits })
  resetWorld()
})

test.skipIf(skip)(
  'discord.py logs in, gets on_ready, sends and reads messages, paces itself and closes',
  async () => {
    if (!installed) throw new Error(`CI runs the discord.py test, but ${PYTHON} cannot import discord`)
    const { url } = await server()
    const app = await makeApp()
    const bot = (await api('GET', '/users/@me', { token: `Bot ${app.bot_token}` })).body
    const { owner, guild, channelId } = await makeGuild('discord.py guild')
    await addMember((await getGuild(guild.id))!, bot.id)
    // MANAGE_MESSAGES, for the pins and the bulk deletion.
    const role = await api('POST', `/guilds/${guild.id}/roles`, {
      token: owner.token,
      body: { name: 'bot', permissions: String(1 << 13) },
    })
    await api('PUT', `/guilds/${guild.id}/members/${bot.id}/roles/${role.body.id}`, { token: owner.token })
    await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'before the bot' } })

    const run = Bun.spawn([PYTHON, join(import.meta.dir, 'discordpy_bot.py')], {
      env: {
        ...process.env,
        BASE_URL: url,
        BOT_TOKEN: app.bot_token,
        OWNER_TOKEN: owner.token,
        GUILD_ID: guild.id,
        CHANNEL_ID: channelId,
      },
      stdout: 'pipe',
      stderr: 'pipe',
    })
    const [out, err, code] = await Promise.all([run.stdout.text(), run.stderr.text(), run.exited])
    if (code !== 0) throw new Error(`discord.py exited ${code}: ${err}`)
    const r = JSON.parse(out.trim().split('\n').at(-1)!)
    // A step that raised says so here, with discord.py's traceback.
    expect(Object.entries(r).filter(([, v]: [string, any]) => v?.error)).toEqual([])

    // Client.login: GET /users/@me, then GET /oauth2/applications/@me.
    expect(r.login).toEqual({ user_id: bot.id, bot: true, application_id: app.id, name: app.name })
    // The Gateway up to on_ready, with the guild (from its GUILD_CREATE), the bot's member and the channel cached.
    expect(r.gateway).toEqual({
      ready_user_id: bot.id,
      guild: { id: guild.id, name: 'discord.py guild', member_count: 2, unavailable: false },
      me: bot.id,
      channel: { id: channelId, type: 'TextChannel', name: expect.any(String) },
    })
    // channel.send, and its MESSAGE_CREATE as on_message.
    expect(r.message.event_id).toBe(r.message.sent_id)
    expect(r.message).toMatchObject({ event_author_id: bot.id, event_channel_id: channelId, event_guild_id: guild.id })
    // A member's message: its author is a discord.Member (MESSAGE_CREATE carries the author's member).
    expect(r.members_message).toEqual({ author_id: owner.id, class: 'Member', joined: true })
    // channel.history: newest first (the owner's two messages around the bot's), before the steps below add theirs.
    expect(r.history.map((m: { author_id: string }) => m.author_id)).toEqual([owner.id, bot.id, owner.id])
    expect(r.history[1].id).toBe(r.message.sent_id)
    expect(r.history[2].content).toBe('before the bot')
    // A form error is discord.HTTPException with Discord's code and the field in its text.
    expect(r.form_error).toMatchObject({ class: 'HTTPException', status: 400, code: 50035 })
    expect(r.form_error.text).toContain('In content')
    // Client.fetch_user and Guild.fetch_member; an unknown user is discord.NotFound with 10013.
    expect(r.users).toEqual({
      user: { id: owner.id, name: owner.username, bot: false },
      member: { id: owner.id, class: 'Member', joined: true },
      unknown: { class: 'NotFound', code: 10013 },
    })
    // fetch_message, Message.edit with on_message_edit, Message.delete with on_raw_message_delete, delete_messages.
    expect(r.edits).toMatchObject({
      fetched: { content: 'to be edited', author_id: bot.id },
      edited: { content: 'edited by discord.py', edited_at: true },
      event: { before: 'to be edited', after: 'edited by discord.py' },
      deleted: { id: r.edits.fetched.id, channel_id: channelId },
      gone: { class: 'NotFound', code: 10008 },
      bulk: true,
    })
    // channel.send(embed=discord.Embed(...)): the same embed from the answer and from on_message.
    const embed = {
      title: 'Match found',
      description: 'Two teams of five',
      colour: 0x5865f2,
      fields: [['Map', 'Harbour', true]],
      footer: 'Lobby 7',
    }
    expect(r.embeds).toEqual({ content: '', sent: embed, event: embed })
    // channel.typing(), and on_typing from its TYPING_START with the bot's member.
    expect(r.typing).toEqual({ channel_id: channelId, user_id: bot.id, member: 'Member' })
    // Message.pin (on_guild_channel_pins_update), TextChannel.pins, the message's pinned, Message.unpin.
    expect(r.pins).toEqual({
      event: { channel_id: channelId, last_pin: true },
      pins: [r.pins.message_id],
      message_id: expect.any(String),
      pinned: true,
      after_unpin: [],
    })
    // Message.add_reaction('👍') with on_raw_reaction_add, the count with `me`, Reaction.users, remove_reaction; a
    // custom emoji is 400 10014.
    expect(r.reactions).toEqual({
      event: { user_id: bot.id, emoji: '👍', member: true },
      reaction: { emoji: '👍', count: 1, me: true },
      users: [bot.id],
      after_remove: 0,
      custom: { status: 400, code: 10014 },
    })
    // CommandTree.sync(): the global list, then a guild's (copy_global_to), ids kept when synced again; fetch_commands.
    const queue = {
      name: 'queue',
      type: 'chat_input',
      options: [
        ['mode', 'string', true],
        ['size', 'integer', false],
      ],
    }
    const report = { name: 'Report', type: 'message', options: [] }
    expect(r.commands).toEqual({
      synced: [
        { ...queue, guild_id: null },
        { ...report, guild_id: null },
      ],
      guild: [
        { ...queue, guild_id: guild.id },
        { ...report, guild_id: guild.id },
      ],
      same_ids: true,
      fetched: ['queue', 'Report'],
    })
    // Lobby routes through discord.http.Route (2.2.2 has no lobby API).
    expect(r.lobby.metadata).toEqual({ from: 'discord.py' })
    expect(r.lobby.message).toMatchObject({ lobby_id: r.lobby.id, content: 'lobby hello', author: { id: bot.id } })
    // 21 at once against 10 per second: spread over three windows by the headers, without a 429.
    expect(r.pacing).toMatchObject({ sent: 21, rate_limited: 0 })
    expect(r.pacing.seconds).toBeGreaterThanOrEqual(1)
    // A 429 met (the bucket spent by another client) is waited out and the request made again.
    expect(r.waited_out).toMatchObject({ content: 'after the wait', rate_limited: 1 })
    expect(r.waited_out.seconds).toBeGreaterThan(0.3)
    // AutoShardedClient: GET /gateway/bot's one shard, identified as [0, 1] and read back from READY.
    expect(r.sharded).toEqual({ shard_count: 1, shards: [0], guild_shard: 0 })
    // Client.close (both clients) closes with 1000, which ends the session on the server rather than leaving it to
    // be resumed.
    expect(r.close).toEqual({ closed: true })
    expect([...sessionsOfUser(bot.id)]).toEqual([])
  },
  30_000,
)
