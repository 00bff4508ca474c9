// Channel linking, invites and mirrored messages through the guild seam, with a stand-in guilds domain.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import type { Caller } from '../../src/core/caller'
import { snowflake } from '../../src/core/snowflake'
import { Permission } from '../../src/core/discord'
import { guildPort, setGuildPort, type GuildPort, type LinkableChannel } from '../../src/lobbies/guild-port'
import { api, resetWorld } from '../helpers'
import { rawSql } from '../db/raw'
import { connect } from './fake-gateway'
import { createLobby, setup } from './helpers'

const channels = new Map<string, LinkableChannel>()
const perms = new Map<string, bigint>()
const invites: { channelId: string; inviterId: string; targetUserId: string; maxAgeSeconds: number; code: string }[] =
  []
const posted: { channelId: string; authorId: string; content: string }[] = []

const fake: GuildPort = {
  async getChannel(id) {
    return channels.get(id)
  },
  serializeChannel(id) {
    const c = channels.get(id)
    return c ? { id: c.id, type: c.type, guild_id: c.guildId, name: 'general' } : undefined
  },
  async channelPermissions(userId, channelId) {
    return perms.get(`${userId}:${channelId}`) ?? 0n
  },
  async createTargetedInvite(input) {
    const code = `code${invites.length}`
    invites.push({ ...input, code })
    return {
      code,
      invite: {
        code,
        channel_id: input.channelId,
        target_user: { id: input.targetUserId },
        max_age: input.maxAgeSeconds,
        max_uses: 1,
      },
    }
  },
  async createChannelMessage(input) {
    posted.push(input)
    return { id: snowflake() }
  },
  channelMessageModerated() {},
}

let previous: GuildPort | undefined
beforeAll(() => {
  previous = guildPort()
  setGuildPort(fake)
})
afterAll(() => setGuildPort(previous))
afterEach(resetWorld)

const ALL = Permission.MANAGE_CHANNELS | Permission.VIEW_CHANNEL | Permission.SEND_MESSAGES

function textChannel(overrides: Partial<LinkableChannel> = {}): LinkableChannel {
  const c = { id: snowflake(), type: 0, guildId: snowflake(), ...overrides }
  channels.set(c.id, c)
  return c
}

async function linkWorld() {
  const { app, bot, players } = await setup(3)
  const [linker, plain, outsider] = players
  const lobby = await createLobby(bot, { members: [{ id: linker.id, flags: 1 }, { id: plain.id }] })
  const channel = textChannel()
  perms.set(`${linker.id}:${channel.id}`, ALL)
  perms.set(`${plain.id}:${channel.id}`, ALL)
  return { app, bot, linker, plain, outsider, lobby, channel }
}

describe('PATCH /lobbies/{id}/channel-linking', () => {
  test('a CAN_LINK_LOBBY member with the permissions links and unlinks; events go to the lobby', async () => {
    const { app, bot, linker, plain, lobby, channel } = await linkWorld()
    const sockets = {
      plain: await connect({ kind: 'user', userId: plain.id, sessionId: 's', sessionIdHash: 'h' } as Caller),
      bot: await connect({ kind: 'bot', userId: 'b', applicationId: app.id }),
    }
    const r = await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    expect(r.status).toBe(200)
    expect(r.body.linked_channel).toMatchObject({ id: channel.id, type: 0 })
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.linked_channel.id).toBe(channel.id)
    for (const s of Object.values(sockets)) {
      expect(s.events('LOBBY_UPDATE')[0].linked_channel.id).toBe(channel.id)
      expect(s.events('CHANNEL_UPDATE')[0]).toMatchObject({
        id: channel.id,
        linked_lobby: { lobby_id: lobby.id, application_id: app.id, linked_by: linker.id },
      })
    }
    // Relinking the same channel is fine.
    expect(
      (
        await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
          token: linker.bearer,
          body: { channel_id: channel.id },
        })
      ).status,
    ).toBe(200)

    // Unlink: channel_id null, absent, or no body at all.
    const unlinked = await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: null },
    })
    expect(unlinked.status).toBe(200)
    expect(unlinked.body.linked_channel).toBeUndefined()
    expect(sockets.plain.events('CHANNEL_UPDATE').at(-1)).toMatchObject({ id: channel.id, linked_lobby: null })
    await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, { token: linker.bearer, body: {} })).body
        .linked_channel,
    ).toBeUndefined()
  })

  test('refusals: no CAN_LINK_LOBBY, missing permissions, not a text channel, already linked, user token, non-member', async () => {
    const { bot, linker, plain, outsider, lobby, channel } = await linkWorld()
    const link = (token: string, channelId: string) =>
      api('PATCH', `/lobbies/${lobby.id}/channel-linking`, { token, body: { channel_id: channelId } })
    expect((await link(plain.bearer, channel.id)).body.code).toBe(50013)
    expect((await link(linker.token, channel.id)).body.code).toBe(20002)
    expect((await link(outsider.bearer, channel.id)).body.code).toBe(10031)
    expect((await link(linker.bearer, '123456789012345678')).body.code).toBe(10003)
    expect((await link(linker.bearer, 'abc')).status).toBe(400)

    for (const missing of [Permission.MANAGE_CHANNELS, Permission.SEND_MESSAGES]) {
      const c = textChannel()
      perms.set(`${linker.id}:${c.id}`, ALL & ~missing)
      const r = await link(linker.bearer, c.id)
      expect(r.status).toBe(403)
      expect(r.body.code).toBe(50013)
    }
    const hidden = textChannel()
    perms.set(`${linker.id}:${hidden.id}`, ALL & ~Permission.VIEW_CHANNEL)
    expect((await link(linker.bearer, hidden.id)).status).toBe(403)

    const voice = textChannel({ type: 2 })
    perms.set(`${linker.id}:${voice.id}`, ALL)
    expect((await link(linker.bearer, voice.id)).status).toBe(400)
    const nsfw = textChannel({ nsfw: true })
    perms.set(`${linker.id}:${nsfw.id}`, ALL)
    expect((await link(linker.bearer, nsfw.id)).status).toBe(400)

    expect((await link(linker.bearer, channel.id)).status).toBe(200)
    const second = await createLobby(bot, { members: [{ id: linker.id, flags: 1 }] })
    const taken = await api('PATCH', `/lobbies/${second.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    expect(taken.status).toBe(400)
    expect(taken.body.errors.channel_id._errors[0].code).toBe('CHANNEL_ALREADY_LINKED')
    // Unlinking needs only the flag.
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, { token: plain.bearer, body: {} })).body.code,
    ).toBe(50013)
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, { token: linker.bearer, body: {} })).status,
    ).toBe(200)
  })
})

describe('invites and mirrored messages', () => {
  test('@me and member invites: single use, one hour, targeted; INVITE_CREATE to the lobby', async () => {
    const { app, linker, plain, outsider, lobby, channel } = await linkWorld()
    const noLink = await api('POST', `/lobbies/${lobby.id}/members/@me/invites`, { token: plain.bearer })
    expect(noLink.status).toBe(404)
    await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    const socket = await connect({ kind: 'bot', userId: 'b', applicationId: app.id })
    const mine = await api('POST', `/lobbies/${lobby.id}/members/@me/invites`, { token: plain.bearer })
    expect(mine.status).toBe(200)
    expect(mine.body).toEqual({ code: expect.any(String) })
    expect(invites.at(-1)).toMatchObject({
      channelId: channel.id,
      inviterId: plain.id,
      targetUserId: plain.id,
      maxAgeSeconds: 3600,
      code: mine.body.code,
    })
    expect(socket.events('INVITE_CREATE')[0].code).toBe(mine.body.code)
    const theirs = await api('POST', `/lobbies/${lobby.id}/members/${plain.id}/invites`, { token: linker.bearer })
    expect(invites.at(-1)).toMatchObject({ targetUserId: plain.id, inviterId: linker.id, code: theirs.body.code })
    expect(
      (await api('POST', `/lobbies/${lobby.id}/members/${outsider.id}/invites`, { token: linker.bearer })).status,
    ).toBe(404)
    expect((await api('POST', `/lobbies/${lobby.id}/members/@me/invites`, { token: outsider.bearer })).body.code).toBe(
      10031,
    )
    expect((await api('POST', `/lobbies/${lobby.id}/members/@me/invites`, { token: plain.token })).body.code).toBe(
      20002,
    )
  })

  test('a lobby message is copied to the linked channel', async () => {
    const { linker, lobby, channel } = await linkWorld()
    await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    const r = await api('POST', `/lobbies/${lobby.id}/messages`, {
      token: linker.bearer,
      body: { content: 'to the channel', metadata: { k: 'v' } },
    })
    expect(r.status).toBe(201)
    expect(posted.at(-1)).toEqual({ channelId: channel.id, authorId: linker.id, content: 'to the channel' })
  })

  test('REQUIRE_APPLICATION_AUTHORIZATION: only users who authorized the application are copied', async () => {
    const { bot, linker, plain, channel } = await linkWorld()
    const lobby = await createLobby(bot, { flags: 1, members: [{ id: linker.id, flags: 1 }, { id: plain.id }] })
    await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: linker.bearer,
      body: { channel_id: channel.id },
    })
    const before = posted.length
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: linker.bearer, body: { content: 'authorized' } })
    expect(posted.length).toBe(before + 1)
    // A member who never authorized the application (e.g. added by the bot, speaking through a revoked grant) is not copied.
    await rawSql('DELETE FROM oauth2_tokens WHERE user_id = ?', plain.id)
    const { postMessage } = await import('../../src/lobbies/messages')
    const { cachedLobby } = await import('../../src/lobbies/store')
    await postMessage(async () => (await cachedLobby(lobby.id))!, plain.id, { content: 'not authorized' })
    expect(posted.length).toBe(before + 1)
  })
})
