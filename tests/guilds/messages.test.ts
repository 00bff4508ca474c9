// One channel message and what hangs on it, as a bot's library depends on: users and members read one at a time,
// a message read, edited, deleted (one or many), embeds with Discord's limits at their edges, typing, pins and
// reactions, with the events each sends on a real socket and the permission each needs.
import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { join, makeGuild, type TestUser } from './helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})
const socket = (token: string) => sockets.identified(token)

const VIEW = 1 << 10
const SEND = 1 << 11
const HISTORY = 1 << 16
const REACT = 1 << 6

/** Set what @everyone may do (members without roles get exactly this). */
async function everyone(owner: TestUser, guildId: string, bits: number) {
  const r = await api('PATCH', `/guilds/${guildId}/roles/${guildId}`, {
    token: owner.token,
    body: { permissions: String(bits) },
  })
  expect(r.status).toBe(200)
}

async function send(user: TestUser, channelId: string, body: Record<string, unknown> = { content: 'hello' }) {
  return api('POST', `/channels/${channelId}/messages`, { token: user.token, body })
}

async function sent(user: TestUser, channelId: string, content = 'hello'): Promise<string> {
  const r = await send(user, channelId, { content })
  expect(r.status).toBe(200)
  return r.body.id
}

/** A guild with its owner, a member, and the member's socket. */
async function world() {
  const { owner, guild, channelId } = await makeGuild()
  const member = await join(channelId, owner)
  return { owner, guild, channelId, member }
}

const thumbs = encodeURIComponent('👍')
const reactionPath = (channelId: string, messageId: string, emoji = thumbs, who = '@me') =>
  `/channels/${channelId}/messages/${messageId}/reactions/${emoji}/${who}`

describe('GET /users/{id} and GET /guilds/{id}/members/{id}', () => {
  test('a user by id: its public fields to users and bots; 10013 for an unknown or malformed id', async () => {
    const user = await makeUser()
    const app = await makeApp()
    const asUser = await api('GET', `/users/${user.id}`, { token: (await makeUser()).token })
    expect(asUser.status).toBe(200)
    expect(asUser.body).toEqual({
      id: user.id,
      username: user.username,
      global_name: null,
      discriminator: '0',
      avatar: null,
      bot: false,
      public_flags: 0,
    })
    expect((await api('GET', `/users/${user.id}`, { token: `Bot ${app.bot_token}` })).body).toEqual(asUser.body)
    for (const id of ['999999999999999999', 'nope']) {
      const r = await api('GET', `/users/${id}`, { token: user.token })
      expect([r.status, r.body]).toEqual([404, { message: 'Unknown User', code: 10013 }])
    }
    // The encoded @me is still the caller's own private user.
    expect((await api('GET', '/users/%40me', { token: user.token })).body).toMatchObject({
      id: user.id,
      email: user.email,
    })
    expect((await api('GET', `/users/${user.id}`, {})).status).toBe(401)
  })

  test('a member by user id: members only (10004), 10007 for a user who is not one', async () => {
    const { owner, guild, member } = await world()
    const r = await api('GET', `/guilds/${guild.id}/members/${owner.id}`, { token: member.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ user: { id: owner.id }, roles: [], nick: null, joined_at: expect.any(String) })
    const stranger = await makeUser()
    const missing = await api('GET', `/guilds/${guild.id}/members/${stranger.id}`, { token: member.token })
    expect([missing.status, missing.body]).toEqual([404, { message: 'Unknown Member', code: 10007 }])
    const outsider = await api('GET', `/guilds/${guild.id}/members/${owner.id}`, { token: stranger.token })
    expect([outsider.status, outsider.body.code]).toEqual([404, 10004])
  })
})

describe('one message', () => {
  test("GET: READ_MESSAGE_HISTORY; 10008 for another channel's message or none; 10003 outside", async () => {
    const { owner, guild, channelId, member } = await world()
    const id = await sent(owner, channelId, 'first')
    const r = await api('GET', `/channels/${channelId}/messages/${id}`, { token: member.token })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id, content: 'first', channel_id: channelId, author: { id: owner.id } })
    const other = (await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'b' } })).body
    const elsewhere = await api('GET', `/channels/${other.id}/messages/${id}`, { token: member.token })
    expect([elsewhere.status, elsewhere.body]).toEqual([404, { message: 'Unknown Message', code: 10008 }])
    expect((await api('GET', `/channels/${channelId}/messages/1`, { token: member.token })).body.code).toBe(10008)
    const outsider = await makeUser()
    expect((await api('GET', `/channels/${channelId}/messages/${id}`, { token: outsider.token })).body.code).toBe(10003)
    await everyone(owner, guild.id, VIEW | SEND)
    const blind = await api('GET', `/channels/${channelId}/messages/${id}`, { token: member.token })
    expect([blind.status, blind.body.code]).toEqual([403, 50013])
  })

  test('PATCH: the author edits content or embeds, edited_timestamp set, MESSAGE_UPDATE to viewers; others 50005', async () => {
    const { owner, channelId, member } = await world()
    const id = await sent(member, channelId, 'before')
    const watcher = await socket(owner.token)
    const r = await api('PATCH', `/channels/${channelId}/messages/${id}`, {
      token: member.token,
      body: { content: 'after' },
    })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ id, content: 'after', author: { id: member.id } })
    expect(Date.parse(r.body.edited_timestamp)).toBeGreaterThanOrEqual(Date.parse(r.body.timestamp))
    const update = (await watcher.waitFor('MESSAGE_UPDATE')).d
    expect(update).toMatchObject({
      id,
      channel_id: channelId,
      content: 'after',
      edited_timestamp: r.body.edited_timestamp,
    })
    expect(update.member).toMatchObject({ roles: [], joined_at: expect.any(String) })
    // Embeds replace the content; the message may not end up empty.
    const embedded = await api('PATCH', `/channels/${channelId}/messages/${id}`, {
      token: member.token,
      body: { content: null, embeds: [{ title: 'Now an embed' }] },
    })
    expect(embedded.body).toMatchObject({ content: '', embeds: [{ type: 'rich', title: 'Now an embed' }] })
    const empty = await api('PATCH', `/channels/${channelId}/messages/${id}`, {
      token: member.token,
      body: { embeds: [] },
    })
    expect([empty.status, empty.body]).toEqual([400, { message: 'Cannot send an empty message', code: 50006 }])
    // Not even the owner edits another's message.
    const denied = await api('PATCH', `/channels/${channelId}/messages/${id}`, {
      token: owner.token,
      body: { content: 'hijacked' },
    })
    expect([denied.status, denied.body]).toEqual([
      403,
      { message: 'Cannot edit a message authored by another user', code: 50005 },
    ])
    expect((await api('GET', `/channels/${channelId}/messages/${id}`, { token: owner.token })).body.embeds).toEqual([
      { type: 'rich', title: 'Now an embed' },
    ])
    const tooLong = await api('PATCH', `/channels/${channelId}/messages/${id}`, {
      token: member.token,
      body: { content: 'x'.repeat(2001) },
    })
    expect(tooLong.body.errors.content._errors[0].code).toBe('BASE_TYPE_MAX_LENGTH')
  })

  test('DELETE: the author, or MANAGE_MESSAGES; 204 and MESSAGE_DELETE {id, channel_id, guild_id}', async () => {
    const { owner, guild, channelId, member } = await world()
    const mine = await sent(member, channelId)
    const theirs = await sent(owner, channelId)
    const watcher = await socket(owner.token)
    const denied = await api('DELETE', `/channels/${channelId}/messages/${theirs}`, { token: member.token })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
    const r = await api('DELETE', `/channels/${channelId}/messages/${mine}`, { token: member.token })
    expect([r.status, r.body]).toEqual([204, null])
    expect((await watcher.waitFor('MESSAGE_DELETE')).d).toEqual({ id: mine, channel_id: channelId, guild_id: guild.id })
    expect((await api('DELETE', `/channels/${channelId}/messages/${mine}`, { token: member.token })).body.code).toBe(
      10008,
    )
    expect((await api('GET', `/channels/${channelId}/messages/${mine}`, { token: owner.token })).status).toBe(404)
    // The owner has MANAGE_MESSAGES: another's message goes too.
    const byMember = await sent(member, channelId)
    expect((await api('DELETE', `/channels/${channelId}/messages/${byMember}`, { token: owner.token })).status).toBe(
      204,
    )
    const page = (await api('GET', `/channels/${channelId}/messages`, { token: owner.token })).body
    expect(page.map((m: { id: string }) => m.id)).toEqual([theirs])
  })

  test('bulk-delete: MANAGE_MESSAGES, 2-100 ids (unknown ones count and are passed over), under 14 days; MESSAGE_DELETE_BULK', async () => {
    const { owner, guild, channelId, member } = await world()
    const ids = [await sent(member, channelId), await sent(owner, channelId), await sent(member, channelId)]
    const watcher = await socket(member.token)
    const path = `/channels/${channelId}/messages/bulk-delete`
    const denied = await api('POST', path, { token: member.token, body: { messages: ids } })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
    for (const count of [1, 101]) {
      const r = await api('POST', path, {
        token: owner.token,
        body: { messages: Array.from({ length: count }, (_, i) => String(1000 + i)) },
      })
      expect(r.status).toBe(400)
      expect(r.body.errors.messages._errors).toEqual([
        { code: 'BASE_TYPE_BAD_LENGTH', message: 'Must be between 2 and 100 in length.' },
      ])
    }
    const r = await api('POST', path, { token: owner.token, body: { messages: [ids[0], ids[1], '123'] } })
    expect([r.status, r.body]).toEqual([204, null])
    const bulk = (await watcher.waitFor('MESSAGE_DELETE_BULK')).d
    expect({ ...bulk, ids: [...bulk.ids].sort() }).toEqual({
      ids: [ids[0], ids[1]].sort(),
      channel_id: channelId,
      guild_id: guild.id,
    })
    const left = (await api('GET', `/channels/${channelId}/messages`, { token: owner.token })).body
    expect(left.map((m: { id: string }) => m.id)).toEqual([ids[2]])
    // Two weeks on, the remaining message is too old: none is deleted.
    const fresh = await sent(owner, channelId)
    clock.advance(14 * 24 * 3600_000 + 1000)
    const old = await api('POST', path, { token: owner.token, body: { messages: [ids[2], fresh] } })
    expect([old.status, old.body]).toEqual([
      400,
      { message: 'You can only bulk delete messages that are under 14 days old.', code: 50034 },
    ])
    expect((await api('GET', `/channels/${channelId}/messages`, { token: owner.token })).body).toHaveLength(2)
  })
})

describe('replies', () => {
  const reply = (user: TestUser, channelId: string, reference: Record<string, unknown>, content = 'a reply') =>
    send(user, channelId, { content, message_reference: reference })

  test('message_reference: type 19, the reference and the message replied to, in the answer, the event and pages', async () => {
    const { owner, guild, channelId, member } = await world()
    const first = await sent(owner, channelId, 'the question')
    const watcher = await socket(owner.token)
    const r = await reply(member, channelId, { message_id: first, fail_if_not_exists: true })
    expect(r.status).toBe(200)
    const original = (await api('GET', `/channels/${channelId}/messages/${first}`, { token: owner.token })).body
    expect(r.body).toMatchObject({
      type: 19,
      content: 'a reply',
      message_reference: { type: 0, message_id: first, channel_id: channelId, guild_id: guild.id },
      referenced_message: original,
    })
    const event = (await watcher.waitFor('MESSAGE_CREATE')).d
    expect(event).toMatchObject({ id: r.body.id, type: 19, referenced_message: original })
    expect(event.message_reference).toEqual(r.body.message_reference)
    // A reply to the reply: its referenced_message names its own reference, one level deep.
    const second = await reply(owner, channelId, { message_id: r.body.id, channel_id: channelId, guild_id: guild.id })
    expect(second.body.referenced_message).toMatchObject({
      id: r.body.id,
      type: 19,
      message_reference: { message_id: first },
    })
    expect(second.body.referenced_message.referenced_message).toBeUndefined()
    // Pages and one message read carry them; an edit of the original shows in the reply, its deletion leaves null.
    await api('PATCH', `/channels/${channelId}/messages/${first}`, { token: owner.token, body: { content: 'edited' } })
    const page = (await api('GET', `/channels/${channelId}/messages`, { token: member.token })).body
    expect(page.map((m: any) => [m.type, m.referenced_message?.content ?? null])).toEqual([
      [19, 'a reply'],
      [19, 'edited'],
      [0, null],
    ])
    await api('DELETE', `/channels/${channelId}/messages/${first}`, { token: owner.token })
    const orphan = (await api('GET', `/channels/${channelId}/messages/${r.body.id}`, { token: member.token })).body
    expect([orphan.type, orphan.message_reference.message_id, orphan.referenced_message]).toEqual([19, first, null])
    const listed = (
      await api('GET', `/channels/${channelId}/messages?limit=1&before=${second.body.id}`, {
        token: member.token,
      })
    ).body
    expect(listed[0].referenced_message).toBeNull()
  })

  test('a message not in the channel: 50035 MESSAGE_REFERENCE_UNKNOWN_MESSAGE, or no reply with fail_if_not_exists false', async () => {
    const { owner, guild, channelId } = await world()
    const other = await api('POST', `/guilds/${guild.id}/channels`, { token: owner.token, body: { name: 'other' } })
    const elsewhere = await sent(owner, other.body.id, 'elsewhere')
    const here = await sent(owner, channelId, 'here')
    const unknown = {
      message_reference: { _errors: [{ code: 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', message: 'Unknown message' }] },
    }
    for (const reference of [
      { message_id: '1' },
      { message_id: elsewhere },
      { message_id: here, channel_id: other.body.id },
      { message_id: here, guild_id: '1' },
    ]) {
      const r = await reply(owner, channelId, reference)
      expect([r.status, r.body]).toEqual([400, { code: 50035, message: 'Invalid Form Body', errors: unknown }])
    }
    const plain = await reply(owner, channelId, { message_id: '1', fail_if_not_exists: false })
    expect([plain.status, plain.body.type, 'message_reference' in plain.body]).toEqual([200, 0, false])
    // The reference's fields: a snowflake message_id, required; type 0 only.
    const bad = await reply(owner, channelId, { message_id: 'x' })
    expect(bad.body.errors.message_reference.message_id._errors[0].code).toBe('NUMBER_TYPE_COERCE')
    const missing = await reply(owner, channelId, { channel_id: channelId })
    expect(missing.body.errors.message_reference.message_id._errors[0].code).toBe('BASE_TYPE_REQUIRED')
    expect((await reply(owner, channelId, { message_id: here, type: 1 })).status).toBe(400)
  })

  test('replying takes READ_MESSAGE_HISTORY', async () => {
    const { owner, guild, channelId, member } = await world()
    const first = await sent(owner, channelId, 'history')
    await everyone(owner, guild.id, VIEW | SEND)
    const r = await reply(member, channelId, { message_id: first })
    expect([r.status, r.body.code]).toEqual([403, 50013])
    expect((await send(member, channelId, { content: 'no reply' })).status).toBe(200)
  })
})

describe('mentions', () => {
  const MENTION_EVERYONE = 1 << 17
  const ids = (users: { id: string }[]) => users.map((u) => u.id)

  test('<@id>, <@!id>, <@&id>, @everyone: resolved when sent, as the answer, the event and pages show them', async () => {
    const { owner, guild, channelId, member } = await world()
    const outsider = await makeUser()
    const role = async (name: string, mentionable: boolean) =>
      (await api('POST', `/guilds/${guild.id}/roles`, { token: owner.token, body: { name, mentionable } })).body.id
    const open = await role('open', true)
    const closed = await role('closed', false)
    await everyone(owner, guild.id, VIEW | SEND | HISTORY) // no MENTION_EVERYONE (Discord's default has it)
    const watcher = await socket(owner.token)
    const content = `hi <@${owner.id}> <@!${outsider.id}> <@${owner.id}> <@1> <@&${open}> <@&${closed}> <@&1> @everyone`
    const r = await send(member, channelId, { content })
    expect(r.status).toBe(200)
    // Users that exist, once each; roles of the guild a plain member may mention; @everyone needs MENTION_EVERYONE.
    expect([ids(r.body.mentions), r.body.mention_roles, r.body.mention_everyone]).toEqual([
      [owner.id, outsider.id],
      [open],
      false,
    ])
    expect(r.body.mentions[0]).toEqual((await api('GET', `/users/${owner.id}`, { token: owner.token })).body)
    // The event gives each mentioned user its member while it is in the guild.
    const event = (await watcher.waitFor('MESSAGE_CREATE')).d
    const ownerMember = (await api('GET', `/guilds/${guild.id}/members/${owner.id}`, { token: owner.token })).body
    const { user: _, ...memberFields } = ownerMember
    expect(event.mentions).toEqual([{ ...r.body.mentions[0], member: memberFields }, r.body.mentions[1]])
    expect([event.mention_roles, event.mention_everyone]).toEqual([[open], false])
    const page = (await api('GET', `/channels/${channelId}/messages?limit=1`, { token: owner.token })).body[0]
    expect([ids(page.mentions), page.mention_roles, page.mention_everyone]).toEqual([
      [owner.id, outsider.id],
      [open],
      false,
    ])
    // With MENTION_EVERYONE (the owner has every permission): any role, and everyone.
    const all = await send(owner, channelId, { content: `<@&${closed}> @here` })
    expect([all.body.mention_roles, all.body.mention_everyone]).toEqual([[closed], true])
    await everyone(owner, guild.id, VIEW | SEND | HISTORY | MENTION_EVERYONE)
    expect((await send(member, channelId, { content: '@everyone' })).body.mention_everyone).toBe(true)
  })

  test('allowed_mentions: the kinds parsed, the ids listed, parse and a list of one kind refused together', async () => {
    const { owner, channelId, member } = await world()
    const other = await join(channelId, owner)
    const content = `<@${owner.id}> <@${other.id}> @everyone`
    const mentioned = async (allowed_mentions: unknown) => {
      const r = await send(owner, channelId, { content, allowed_mentions })
      expect(r.status).toBe(200)
      return [ids(r.body.mentions), r.body.mention_everyone]
    }
    expect(await mentioned({ parse: [] })).toEqual([[], false])
    expect(await mentioned({ users: [other.id] })).toEqual([[other.id], false])
    expect(await mentioned({ parse: ['users'] })).toEqual([[owner.id, other.id], false])
    expect(await mentioned({ parse: ['everyone'], users: [owner.id] })).toEqual([[owner.id], true])
    const both = await send(owner, channelId, { content, allowed_mentions: { parse: ['users'], users: [other.id] } })
    expect([both.status, both.body.code, both.body.errors.allowed_mentions._errors[0].code]).toEqual([
      400,
      50035,
      'MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE',
    ])
    const bogus = await send(owner, channelId, { content, allowed_mentions: { parse: ['members'] } })
    expect([bogus.status, bogus.body.code]).toEqual([400, 50035])
    const many = await send(owner, channelId, { content, allowed_mentions: { users: Array(101).fill(owner.id) } })
    expect([many.status, Object.keys(many.body.errors)]).toEqual([400, ['allowed_mentions']])
    // A reply mentions the author replied to, unless allowed_mentions is given without replied_user.
    const question = await sent(member, channelId, 'a question')
    const reply = async (allowed_mentions?: unknown) =>
      ids(
        (
          await send(owner, channelId, {
            content: 'an answer',
            message_reference: { message_id: question },
            allowed_mentions,
          })
        ).body.mentions,
      )
    expect(await reply()).toEqual([member.id])
    expect(await reply({ parse: ['users'] })).toEqual([])
    expect(await reply({ replied_user: true })).toEqual([member.id])
    const own = await send(member, channelId, { content: 'me again', message_reference: { message_id: question } })
    expect(own.body.mentions).toEqual([])
  })

  test('an edit resolves the new content again; a reply keeps mentioning the author replied to', async () => {
    const { owner, channelId, member } = await world()
    const first = await send(owner, channelId, { content: `<@${member.id}> look` })
    const edited = await api('PATCH', `/channels/${channelId}/messages/${first.body.id}`, {
      token: owner.token,
      body: { content: 'never mind' },
    })
    expect(edited.body.mentions).toEqual([])
    const embedOnly = await api('PATCH', `/channels/${channelId}/messages/${first.body.id}`, {
      token: owner.token,
      body: { content: `<@${owner.id}> me`, allowed_mentions: { parse: [] } },
    })
    expect(embedOnly.body.mentions).toEqual([])
    const question = await sent(member, channelId, 'a question')
    const answer = await send(owner, channelId, { content: 'yes', message_reference: { message_id: question } })
    const changed = await api('PATCH', `/channels/${channelId}/messages/${answer.body.id}`, {
      token: owner.token,
      body: { content: `yes, <@${owner.id}> says` },
    })
    expect(ids(changed.body.mentions)).toEqual([owner.id, member.id])
  })
})

describe('embeds', () => {
  const post = (user: TestUser, channelId: string, embeds: unknown[], content: string | null = null) =>
    send(user, channelId, { content, embeds })

  test('sent without content (null or absent), stored and echoed as Discord answers them; MESSAGE_CREATE carries them', async () => {
    const { owner, channelId, member } = await world()
    const watcher = await socket(member.token)
    // Each field at work, the URLs of each scheme, the highest colour, a timestamp with an offset.
    const embed = {
      author: { name: 'Matchmaker' },
      thumbnail: { url: 'attachment://t.png' },
      image: { url: 'http://example.com/i.png' },
      color: 0xffffff,
      fields: [
        { name: 'Map', value: 'Harbour', inline: true },
        { name: 'Mode', value: 'Ranked' },
      ],
      title: 'Match found',
      timestamp: '2025-01-01T14:00:00+02:00',
      description: 'Two teams',
      footer: { icon_url: 'https://example.com/f.png', text: 'Lobby 7' },
      url: 'https://example.com/m',
    }
    const r = await post(owner, channelId, [embed])
    expect(r.status).toBe(200)
    const echoed = {
      ...embed,
      type: 'rich',
      timestamp: '2025-01-01T12:00:00.000Z',
      fields: [
        { name: 'Map', value: 'Harbour', inline: true },
        { name: 'Mode', value: 'Ranked', inline: false },
      ],
    }
    expect(r.body).toMatchObject({ content: '', embeds: [echoed] })
    expect((await watcher.waitFor('MESSAGE_CREATE')).d.embeds).toEqual([echoed])
    const read = await api('GET', `/channels/${channelId}/messages/${r.body.id}`, { token: member.token })
    expect(read.body.embeds).toEqual([echoed])
    // Without a content field at all, and null fields left out.
    const bare = await send(owner, channelId, { embeds: [{ description: 'only this', title: null, color: null }] })
    expect(bare.body.embeds).toEqual([{ type: 'rich', description: 'only this' }])
  })

  test('an empty message is 50006: no content and no embeds, whichever way', async () => {
    const { owner, channelId } = await world()
    for (const body of [{}, { content: '' }, { content: null }, { content: '', embeds: [] }, { embeds: null }]) {
      const r = await send(owner, channelId, body)
      expect([r.status, r.body], JSON.stringify(body)).toEqual([
        400,
        { message: 'Cannot send an empty message', code: 50006 },
      ])
    }
  })

  test('each limit at its edge: 10 embeds, title 256, description 4096, 25 fields, name 256, value 1024, footer 2048, author 256, color', async () => {
    const { owner, channelId } = await world()
    const cases: [string, (n: number) => unknown[], number, string[]][] = [
      ['embeds', (n) => Array.from({ length: n }, () => ({ title: 't' })), 10, ['embeds']],
      ['title', (n) => [{ title: 'x'.repeat(n) }], 256, ['embeds', '0', 'title']],
      ['description', (n) => [{ description: 'x'.repeat(n) }], 4096, ['embeds', '0', 'description']],
      [
        'fields',
        (n) => [{ fields: Array.from({ length: n }, () => ({ name: 'n', value: 'v' })) }],
        25,
        ['embeds', '0', 'fields'],
      ],
      [
        'field name',
        (n) => [{ fields: [{ name: 'x'.repeat(n), value: 'v' }] }],
        256,
        ['embeds', '0', 'fields', '0', 'name'],
      ],
      [
        'field value',
        (n) => [{ fields: [{ name: 'n', value: 'x'.repeat(n) }] }],
        1024,
        ['embeds', '0', 'fields', '0', 'value'],
      ],
      ['footer', (n) => [{ footer: { text: 'x'.repeat(n) } }], 2048, ['embeds', '0', 'footer', 'text']],
      ['author', (n) => [{ author: { name: 'x'.repeat(n) } }], 256, ['embeds', '0', 'author', 'name']],
    ]
    for (const [what, make, max, path] of cases) {
      expect((await post(owner, channelId, make(max))).status, what).toBe(200)
      const over = await post(owner, channelId, make(max + 1))
      expect(over.status, what).toBe(400)
      const node = path.reduce((tree, key) => tree?.[key], over.body.errors)
      expect(node?._errors, what).toEqual([
        { code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` },
      ])
    }
    const blank = await post(owner, channelId, [{ fields: [{ name: '', value: 'v' }] }])
    expect(blank.body.errors.embeds['0'].fields['0'].name._errors).toEqual([
      { code: 'BASE_TYPE_REQUIRED', message: 'This field is required' },
    ])
    expect((await post(owner, channelId, [{ title: 't', color: 0xffffff }])).status).toBe(200)
    const color = await post(owner, channelId, [{ title: 't', color: 0x1000000 }])
    expect(color.body.errors.embeds['0'].color._errors[0].code).toBe('NUMBER_TYPE_MAX')
  })

  test('6000 characters across all embeds at most (MAX_EMBED_SIZE_EXCEEDED); URLs and timestamps that parse', async () => {
    const { owner, channelId } = await world()
    // 4096 + 1024 + 256 + 256 + 368 = 6000, over two embeds.
    const full = [
      { description: 'x'.repeat(4096), fields: [{ name: 'x'.repeat(256), value: 'x'.repeat(1024) }] },
      { title: 'x'.repeat(256), footer: { text: 'x'.repeat(368) } },
    ]
    expect((await post(owner, channelId, full)).status).toBe(200)
    const over = await post(owner, channelId, [full[0], { ...full[1], author: { name: 'x' } }])
    expect([over.status, over.body]).toEqual([
      400,
      {
        message: 'Invalid Form Body',
        code: 50035,
        errors: {
          embeds: {
            _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED', message: 'Embed size exceeds maximum size of 6000' }],
          },
        },
      },
    ])
    const bad = await post(owner, channelId, [
      { title: 't', url: 'not a url', timestamp: 'yesterday', image: { url: 'ftp://example.com/i.png' } },
    ])
    expect(bad.status).toBe(400)
    expect(bad.body.errors.embeds['0']).toEqual({
      url: { _errors: [{ code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }] },
      timestamp: {
        _errors: [{ code: 'DATE_TIME_TYPE_PARSE', message: 'Could not parse yesterday. Should be ISO8601.' }],
      },
      image: { url: { _errors: [{ code: 'URL_TYPE_INVALID_URL', message: 'Not a well formed URL.' }] } },
    })
  })
})

describe('typing', () => {
  test("POST /typing: 204 and TYPING_START with the member to the channel's viewers; SEND_MESSAGES needed", async () => {
    const { owner, guild, channelId, member } = await world()
    const watcher = await socket(owner.token)
    const outsider = await socket((await makeUser()).token)
    const r = await api('POST', `/channels/${channelId}/typing`, { token: member.token })
    expect([r.status, r.body]).toEqual([204, null])
    const typing = (await watcher.waitFor('TYPING_START')).d
    expect(typing).toMatchObject({
      channel_id: channelId,
      guild_id: guild.id,
      user_id: member.id,
      member: { user: { id: member.id }, roles: [] },
    })
    expect(Math.abs(typing.timestamp - Date.now() / 1000)).toBeLessThan(5)
    await outsider.expectNo('TYPING_START', 50)
    await everyone(owner, guild.id, VIEW | HISTORY)
    const denied = await api('POST', `/channels/${channelId}/typing`, { token: member.token })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
  })
})

describe('pins', () => {
  test('PUT and DELETE /pins/{id}: MANAGE_MESSAGES; `pinned`, MESSAGE_UPDATE and CHANNEL_PINS_UPDATE; GET /pins latest first', async () => {
    const { owner, guild, channelId, member } = await world()
    const first = await sent(member, channelId, 'first')
    const second = await sent(member, channelId, 'second')
    const watcher = await socket(member.token)
    const denied = await api('PUT', `/channels/${channelId}/pins/${first}`, { token: member.token })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
    expect((await api('PUT', `/channels/${channelId}/pins/${first}`, { token: owner.token })).status).toBe(204)
    const update = (await watcher.waitFor('MESSAGE_UPDATE')).d
    expect(update).toMatchObject({ id: first, pinned: true })
    const pins = (await watcher.waitFor('CHANNEL_PINS_UPDATE')).d
    expect(pins).toEqual({ guild_id: guild.id, channel_id: channelId, last_pin_timestamp: expect.any(String) })
    clock.advance(1000)
    expect((await api('PUT', `/channels/${channelId}/pins/${second}`, { token: owner.token })).status).toBe(204)
    await watcher.waitFor((f) => f.t === 'CHANNEL_PINS_UPDATE' && f.d.last_pin_timestamp !== pins.last_pin_timestamp)
    // Pinning again changes nothing and says nothing.
    const events = watcher.dispatches('CHANNEL_PINS_UPDATE').length
    expect((await api('PUT', `/channels/${channelId}/pins/${second}`, { token: owner.token })).status).toBe(204)
    const listed = await api('GET', `/channels/${channelId}/pins`, { token: member.token })
    expect(listed.body.map((m: { id: string; pinned: boolean }) => [m.id, m.pinned])).toEqual([
      [second, true],
      [first, true],
    ])
    expect((await api('GET', `/channels/${channelId}/messages/${first}`, { token: member.token })).body.pinned).toBe(
      true,
    )
    await watcher.expectNo('CHANNEL_PINS_UPDATE', 50)
    expect(watcher.dispatches('CHANNEL_PINS_UPDATE')).toHaveLength(events)
    // Unpinning both: the last CHANNEL_PINS_UPDATE has no pin time left.
    for (const id of [second, first])
      expect((await api('DELETE', `/channels/${channelId}/pins/${id}`, { token: owner.token })).status).toBe(204)
    await watcher.waitFor((f) => f.t === 'CHANNEL_PINS_UPDATE' && f.d.last_pin_timestamp === null)
    expect((await api('GET', `/channels/${channelId}/pins`, { token: member.token })).body).toEqual([])
    expect((await api('PUT', `/channels/${channelId}/pins/1`, { token: owner.token })).body.code).toBe(10008)
    // Without READ_MESSAGE_HISTORY the list is empty, as Discord's.
    await api('PUT', `/channels/${channelId}/pins/${first}`, { token: owner.token })
    await everyone(owner, guild.id, VIEW | SEND)
    expect((await api('GET', `/channels/${channelId}/pins`, { token: member.token })).body).toEqual([])
  })

  test('50 pins per channel: the 51st is 30003', async () => {
    const { owner, channelId } = await world()
    for (let i = 0; i < 50; i++) {
      const id = await sent(owner, channelId, `m${i}`)
      expect((await api('PUT', `/channels/${channelId}/pins/${id}`, { token: owner.token })).status).toBe(204)
    }
    const more = await sent(owner, channelId, 'one too many')
    const r = await api('PUT', `/channels/${channelId}/pins/${more}`, { token: owner.token })
    expect([r.status, r.body]).toEqual([400, { message: 'Maximum number of pins reached (50)', code: 30003 }])
    expect((await api('GET', `/channels/${channelId}/pins`, { token: owner.token })).body).toHaveLength(50)
  })
  test('/messages/pins (discord.js 14.20+): PUT and DELETE as /pins; GET pages {items: [{pinned_at, message}], has_more}', async () => {
    const { owner, guild, channelId, member } = await world()
    const ids = [
      await sent(member, channelId, 'a'),
      await sent(member, channelId, 'b'),
      await sent(member, channelId, 'c'),
    ]
    const pinned: [number, number][] = [] // each pin's time lies between these
    for (const id of ids) {
      const denied = await api('PUT', `/channels/${channelId}/messages/pins/${id}`, { token: member.token })
      expect([denied.status, denied.body.code]).toEqual([403, 50013])
      const start = clock.now()
      expect((await api('PUT', `/channels/${channelId}/messages/pins/${id}`, { token: owner.token })).status).toBe(204)
      pinned.push([start, clock.now()])
      clock.advance(1000)
    }
    const when = (iso: string) => pinned.findIndex(([from, to]) => Date.parse(iso) >= from && Date.parse(iso) <= to)
    const all = await api('GET', `/channels/${channelId}/messages/pins`, { token: member.token })
    expect(all.status).toBe(200)
    expect(all.body.has_more).toBe(false)
    expect(
      all.body.items.map((p: any) => [when(p.pinned_at), p.message.id, p.message.pinned, p.message.content]),
    ).toEqual([
      [2, ids[2], true, 'c'],
      [1, ids[1], true, 'b'],
      [0, ids[0], true, 'a'],
    ])
    expect(all.body.items[0].pinned_at).toBe(new Date(Date.parse(all.body.items[0].pinned_at)).toISOString())
    // A page of 2, then the rest before the last pin time seen.
    const first = await api('GET', `/channels/${channelId}/messages/pins?limit=2`, { token: member.token })
    expect([first.body.items.map((p: any) => p.message.id), first.body.has_more]).toEqual([[ids[2], ids[1]], true])
    const before = encodeURIComponent(first.body.items[1].pinned_at)
    const rest = await api('GET', `/channels/${channelId}/messages/pins?before=${before}`, { token: member.token })
    expect([rest.body.items.map((p: any) => p.message.id), rest.body.has_more]).toEqual([[ids[0]], false])
    // Unpinned there, gone from both lists; unknown message 10008.
    expect((await api('DELETE', `/channels/${channelId}/messages/pins/${ids[0]}`, { token: owner.token })).status).toBe(
      204,
    )
    expect(
      (await api('GET', `/channels/${channelId}/pins`, { token: member.token })).body.map((m: any) => m.id),
    ).toEqual([ids[2], ids[1]])
    const unknown = await api('PUT', `/channels/${channelId}/messages/pins/1`, { token: owner.token })
    expect([unknown.status, unknown.body.code]).toEqual([404, 10008])
    // limit 1-50 and an ISO 8601 `before`, both reported at once.
    for (const [query, errors] of [
      ['limit=0', { limit: 'NUMBER_TYPE_MIN' }],
      ['limit=51', { limit: 'NUMBER_TYPE_MAX' }],
      ['limit=50&before=2025-01-01T00%3A00%3A00Z', {}],
      ['before=yesterday&limit=x', { before: 'DATE_TIME_TYPE_PARSE', limit: 'NUMBER_TYPE_COERCE' }],
    ] as const) {
      const r = await api('GET', `/channels/${channelId}/messages/pins?${query}`, { token: member.token })
      if (!Object.keys(errors).length) {
        expect([r.status, r.body]).toEqual([200, { items: [], has_more: false }])
        continue
      }
      expect([r.status, r.body.code]).toEqual([400, 50035])
      expect(
        Object.fromEntries(Object.entries(r.body.errors).map(([k, v]: [string, any]) => [k, v._errors[0].code])),
      ).toEqual(errors)
    }
    // Without READ_MESSAGE_HISTORY: no pins, as the older route.
    await everyone(owner, guild.id, VIEW | SEND)
    const hidden = await api('GET', `/channels/${channelId}/messages/pins`, { token: member.token })
    expect(hidden.body).toEqual({ items: [], has_more: false })
  })
})

describe('reactions', () => {
  test('add, count with `me` per reader (pages too), list users, remove; MESSAGE_REACTION_ADD and _REMOVE', async () => {
    const { owner, guild, channelId, member } = await world()
    const id = await sent(owner, channelId)
    const watcher = await socket(owner.token)
    expect((await api('PUT', reactionPath(channelId, id), { token: member.token })).status).toBe(204)
    const add = (await watcher.waitFor('MESSAGE_REACTION_ADD')).d
    expect(add).toMatchObject({
      user_id: member.id,
      channel_id: channelId,
      message_id: id,
      guild_id: guild.id,
      emoji: { id: null, name: '👍' },
      message_author_id: owner.id,
      member: { user: { id: member.id } },
    })
    // Again: nothing changes, no event.
    expect((await api('PUT', reactionPath(channelId, id), { token: member.token })).status).toBe(204)
    await watcher.expectNo('MESSAGE_REACTION_ADD', 50)
    expect(watcher.dispatches('MESSAGE_REACTION_ADD')).toHaveLength(1)
    const reaction = (me: boolean, count = 1) => ({
      emoji: { id: null, name: '👍' },
      count,
      count_details: { burst: 0, normal: count },
      burst_colors: [],
      me_burst: false,
      me,
    })
    const seenBy = async (user: TestUser) =>
      (await api('GET', `/channels/${channelId}/messages/${id}`, { token: user.token })).body.reactions
    expect(await seenBy(member)).toEqual([reaction(true)])
    expect(await seenBy(owner)).toEqual([reaction(false)])
    // The channel's page (kept as text) says `me` for each reader too.
    const page = async (user: TestUser) =>
      (await api('GET', `/channels/${channelId}/messages`, { token: user.token })).body[0].reactions
    expect(await page(owner)).toEqual([reaction(false)])
    expect(await page(member)).toEqual([reaction(true)])
    await api('PUT', reactionPath(channelId, id), { token: owner.token })
    expect(await page(owner)).toEqual([reaction(true, 2)])
    expect(await page(member)).toEqual([reaction(true, 2)])
    const users = await api('GET', `/channels/${channelId}/messages/${id}/reactions/${thumbs}`, { token: member.token })
    expect(users.body.map((u: { id: string }) => u.id)).toEqual(
      [owner.id, member.id].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)),
    )
    const firstId = users.body[0].id
    const after = await api(
      'GET',
      `/channels/${channelId}/messages/${id}/reactions/${thumbs}?after=${firstId}&limit=1`,
      {
        token: member.token,
      },
    )
    expect(after.body.map((u: { id: string }) => u.id)).toEqual([users.body[1].id])
    const badLimit = await api('GET', `/channels/${channelId}/messages/${id}/reactions/${thumbs}?limit=101`, {
      token: member.token,
    })
    expect(badLimit.body.errors.limit._errors[0].code).toBe('NUMBER_TYPE_MAX')
    // Removing one's own.
    expect((await api('DELETE', reactionPath(channelId, id), { token: member.token })).status).toBe(204)
    expect((await watcher.waitFor('MESSAGE_REACTION_REMOVE')).d).toEqual({
      user_id: member.id,
      channel_id: channelId,
      message_id: id,
      guild_id: guild.id,
      emoji: { id: null, name: '👍' },
      burst: false,
      type: 0,
    })
    expect(await seenBy(member)).toEqual([reaction(false)])
    // Once the last one goes, the message has no `reactions` at all.
    await api('DELETE', reactionPath(channelId, id), { token: owner.token })
    expect(await seenBy(owner)).toBeUndefined()
  })

  test("another user's reaction, all of an emoji, all of them: MANAGE_MESSAGES; their events", async () => {
    const { owner, guild, channelId, member } = await world()
    const id = await sent(owner, channelId)
    const party = encodeURIComponent('🎉')
    await api('PUT', reactionPath(channelId, id), { token: owner.token })
    await api('PUT', reactionPath(channelId, id), { token: member.token })
    await api('PUT', reactionPath(channelId, id, party), { token: member.token })
    const watcher = await socket(member.token)
    const denied = await api('DELETE', reactionPath(channelId, id, thumbs, owner.id), { token: member.token })
    expect([denied.status, denied.body.code]).toEqual([403, 50013])
    for (const path of [
      `/channels/${channelId}/messages/${id}/reactions`,
      `/channels/${channelId}/messages/${id}/reactions/${party}`,
    ])
      expect((await api('DELETE', path, { token: member.token })).body.code).toBe(50013)
    expect((await api('DELETE', reactionPath(channelId, id, thumbs, member.id), { token: owner.token })).status).toBe(
      204,
    )
    expect((await watcher.waitFor('MESSAGE_REACTION_REMOVE')).d).toMatchObject({ user_id: member.id, message_id: id })
    expect(
      (await api('DELETE', `/channels/${channelId}/messages/${id}/reactions/${party}`, { token: owner.token })).status,
    ).toBe(204)
    expect((await watcher.waitFor('MESSAGE_REACTION_REMOVE_EMOJI')).d).toEqual({
      channel_id: channelId,
      message_id: id,
      guild_id: guild.id,
      emoji: { id: null, name: '🎉' },
    })
    expect(
      (await api('DELETE', `/channels/${channelId}/messages/${id}/reactions`, { token: owner.token })).status,
    ).toBe(204)
    expect((await watcher.waitFor('MESSAGE_REACTION_REMOVE_ALL')).d).toEqual({
      channel_id: channelId,
      message_id: id,
      guild_id: guild.id,
    })
    expect(
      (await api('GET', `/channels/${channelId}/messages/${id}`, { token: owner.token })).body.reactions,
    ).toBeUndefined()
  })

  test('unicode emoji only (10014 otherwise); ADD_REACTIONS for a new emoji only; 20 emoji per message (30010); 10008', async () => {
    const { owner, guild, channelId, member } = await world()
    const id = await sent(owner, channelId)
    for (const emoji of ['custom:123456789012345678', 'abc', '1', encodeURIComponent('👍👍')]) {
      const r = await api('PUT', reactionPath(channelId, id, emoji), { token: member.token })
      expect([r.status, r.body], emoji).toEqual([400, { message: 'Unknown Emoji', code: 10014 }])
    }
    for (const emoji of ['🇫🇷', '1️⃣', '❤', '❤️', '👨‍👩‍👧'])
      expect(
        (await api('PUT', reactionPath(channelId, id, encodeURIComponent(emoji)), { token: member.token })).status,
        emoji,
      ).toBe(204)
    expect((await api('PUT', reactionPath(channelId, '1'), { token: member.token })).body.code).toBe(10008)
    // Without ADD_REACTIONS a member joins a reaction that is there, and adds no new one.
    await everyone(owner, guild.id, VIEW | SEND | HISTORY)
    const joinIn = await api('PUT', reactionPath(channelId, id, encodeURIComponent('🇫🇷')), { token: owner.token })
    expect(joinIn.status).toBe(204)
    await api('DELETE', reactionPath(channelId, id, encodeURIComponent('🇫🇷')), { token: member.token })
    const fresh = await api('PUT', reactionPath(channelId, id), { token: member.token })
    expect([fresh.status, fresh.body.code]).toEqual([403, 50013])
    await everyone(owner, guild.id, VIEW | SEND | HISTORY | REACT)
    // 5 emoji so far; 15 more make 20, the 21st is refused, and an existing one is still fine.
    const more = ['😀', '😁', '😂', '🤣', '😃', '😄', '😅', '😆', '😉', '😊', '😋', '😎', '😍', '😘', '🥰']
    for (const emoji of more)
      expect(
        (await api('PUT', reactionPath(channelId, id, encodeURIComponent(emoji)), { token: member.token })).status,
      ).toBe(204)
    const full = await api('PUT', reactionPath(channelId, id), { token: member.token })
    expect([full.status, full.body]).toEqual([
      400,
      { message: 'Maximum number of reactions reached (20)', code: 30010 },
    ])
    expect(
      (await api('PUT', reactionPath(channelId, id, encodeURIComponent('😀')), { token: owner.token })).status,
    ).toBe(204)
    expect(
      (await api('GET', `/channels/${channelId}/messages/${id}`, { token: owner.token })).body.reactions,
    ).toHaveLength(20)
  })
})
