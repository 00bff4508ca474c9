// Direct messages (issue 45, part 5) on real sockets: who may open a DM (friends, a shared guild or lobby; a bot only
// with a shared guild; a block either way, a stranger, an unknown id and oneself all get the same 403 50007), one DM
// channel per pair (50 parallel opens), its messages through the channel routes for its two recipients only
// (CHANNEL_CREATE to the recipient on the first message, MESSAGE_* and reactions and typing to both), the 2000
// characters' edge, a block after the channel exists, READY's private_channels, and a bot's DIRECT_MESSAGES intent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { GatewayClient, tracked } from '../gateway-client'
import { botInGuild, join, makeGuild } from '../guilds/helpers'
import { rawSql } from '../db/raw'
import { api, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from '../lobbies/helpers'

type User = Awaited<ReturnType<typeof makeUser>>
const sockets = tracked()
afterAll(() => {
  sockets.closeAll()
  resetWorld()
})

const open = (token: string, recipient_id: unknown) =>
  api('POST', '/users/@me/channels', { token, body: { recipient_id } })
const send = (token: string, channelId: string, content: string) =>
  api('POST', `/channels/${channelId}/messages`, { token, body: { content } })
const refusedDm = { message: 'Cannot send messages to this user', code: 50007 }

async function befriend(a: User, b: User) {
  expect((await api('PUT', `/users/@me/relationships/${b.id}`, { token: a.token, body: {} })).status).toBe(204)
  expect((await api('PUT', `/users/@me/relationships/${a.id}`, { token: b.token, body: {} })).status).toBe(204)
}

let a: User
let b: User
beforeAll(async () => {
  a = await makeUser()
  b = await makeUser()
  await befriend(a, b)
})

describe('who may open a DM', () => {
  test('a stranger, an unknown id, oneself and a block either way: the same 403 50007; a bad id: 50035', async () => {
    const stranger = await makeUser()
    for (const id of [stranger.id, '999999999999999999', a.id]) {
      const r = await open(a.token, id)
      expect(r.status).toBe(403)
      expect(r.body).toEqual(refusedDm)
    }
    const bad = await open(a.token, 'nope')
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe(50035)
    expect(bad.body.errors.recipient_id).toBeDefined()

    // Friends, then one blocks the other: refused from both sides.
    const [c, d] = [await makeUser(), await makeUser()]
    await befriend(c, d)
    expect((await open(c.token, d.id)).status).toBe(200)
    expect((await api('PUT', `/users/@me/relationships/${c.id}`, { token: d.token, body: { type: 2 } })).status).toBe(
      204,
    )
    expect((await open(c.token, d.id)).body).toEqual(refusedDm)
    expect((await open(d.token, c.id)).body).toEqual(refusedDm)
  })

  test('members of one guild, and of one lobby, may', async () => {
    const { owner, channelId } = await makeGuild()
    const member = await join(channelId, owner)
    expect((await open(member.token, owner.id)).body).toMatchObject({ type: 1, recipients: [{ id: owner.id }] })

    const { bot, players } = await setup(2)
    const [p, q] = players as [User & { bearer: string }, User & { bearer: string }]
    expect((await open(p.token, q.id)).status).toBe(403)
    await createLobby(bot, { members: [{ id: p.id }, { id: q.id }] })
    expect((await open(p.token, q.id)).body).toMatchObject({ type: 1, recipients: [{ id: q.id }] })
  })

  test('50 parallel opens make one channel; both users list it, and READY carries it', async () => {
    const [c, d] = [await makeUser(), await makeUser()]
    await befriend(c, d)
    const opened = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? open(c.token, d.id) : open(d.token, c.id))),
    )
    expect(opened.map((r) => r.status)).toEqual(Array(50).fill(200))
    const ids = new Set(opened.map((r) => r.body.id))
    expect(ids.size).toBe(1)
    const [id] = ids
    // No channel left behind by an open that lost the race (PostgreSQL: it wrote one, then found the pair taken).
    const orphans = await rawSql(
      'SELECT count(*) AS n FROM channels c WHERE c.guild_id IS NULL AND NOT EXISTS (SELECT 1 FROM dm_channels d WHERE d.channel_id = c.id)',
    )
    expect(Number(orphans[0].n)).toBe(0)
    const mine = await api('GET', '/users/@me/channels', { token: c.token })
    expect(mine.body).toEqual([
      { id, type: 1, last_message_id: null, flags: 0, recipients: [expect.objectContaining({ id: d.id })] },
    ])
    expect((await api('GET', '/users/@me/channels', { token: d.token })).body.map((x: { id: string }) => x.id)).toEqual(
      [id],
    )
    const { client, ready } = await GatewayClient.identified(c.token)
    client.close()
    expect(ready.private_channels).toEqual(mine.body)
  })
})

describe('messages in a DM', () => {
  test('the two recipients on real sockets: CHANNEL_CREATE, MESSAGE_*, reactions, typing; others get 404', async () => {
    const sa = await sockets.identified(a.token)
    const sb = await sockets.identified(b.token)
    const opened = await open(a.token, b.id)
    expect(opened.status).toBe(200)
    const dm = opened.body
    expect(dm).toEqual({
      id: dm.id,
      type: 1,
      last_message_id: null,
      flags: 0,
      recipients: [expect.objectContaining({ id: b.id, username: b.username })],
    })
    // The opener's sessions learn of the channel at once; the recipient's only with the first message.
    expect((await sa.waitFor('CHANNEL_CREATE')).d).toEqual(dm)
    await sb.expectNo('CHANNEL_CREATE', 100)

    const first = await send(a.token, dm.id, 'x'.repeat(2000))
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ channel_id: dm.id, author: { id: a.id }, content: 'x'.repeat(2000) })
    expect(first.body.guild_id).toBeUndefined()
    const created = await sb.waitFor('CHANNEL_CREATE')
    expect(created.d).toMatchObject({ id: dm.id, type: 1, recipients: [{ id: a.id }] })
    const atB = await sb.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === first.body.id)
    expect(atB.s!).toBeGreaterThan(created.s!)
    expect(atB.d).toEqual(first.body)
    expect((await sa.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === first.body.id)).d).toEqual(first.body)
    const long = await send(b.token, dm.id, 'y'.repeat(2001))
    expect(long.status).toBe(400)
    expect(long.body.code).toBe(50035)

    // B answers: no second CHANNEL_CREATE for anyone.
    const reply = await send(b.token, dm.id, 'hello')
    await sa.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === reply.body.id)
    expect(sa.dispatches('CHANNEL_CREATE').length).toBe(1)
    expect(sb.dispatches('CHANNEL_CREATE').length).toBe(1)
    const page = await api('GET', `/channels/${dm.id}/messages`, { token: b.token })
    expect(page.body.map((m: { id: string }) => m.id)).toEqual([reply.body.id, first.body.id])
    expect((await api('GET', `/channels/${dm.id}`, { token: b.token })).body).toMatchObject({
      id: dm.id,
      type: 1,
      last_message_id: reply.body.id,
      recipients: [{ id: a.id }],
    })

    const edited = await api('PATCH', `/channels/${dm.id}/messages/${reply.body.id}`, {
      token: b.token,
      body: { content: 'hello!' },
    })
    expect(edited.status).toBe(200)
    for (const s of [sa, sb])
      expect((await s.waitFor('MESSAGE_UPDATE')).d).toMatchObject({ id: reply.body.id, content: 'hello!' })
    // Either recipient pins (no MANAGE_MESSAGES in a DM, as Discord's): both hear it.
    expect((await api('PUT', `/channels/${dm.id}/pins/${first.body.id}`, { token: b.token })).status).toBe(204)
    for (const s of [sa, sb])
      expect((await s.waitFor('CHANNEL_PINS_UPDATE')).d).toEqual({
        channel_id: dm.id,
        last_pin_timestamp: expect.any(String),
      })
    expect(
      (await api('GET', `/channels/${dm.id}/pins`, { token: a.token })).body.map((m: { id: string }) => m.id),
    ).toEqual([first.body.id])
    const react = await api('PUT', `/channels/${dm.id}/messages/${first.body.id}/reactions/%F0%9F%91%8D/@me`, {
      token: b.token,
    })
    expect(react.status).toBe(204)
    for (const s of [sa, sb])
      expect((await s.waitFor('MESSAGE_REACTION_ADD')).d).toMatchObject({ user_id: b.id, message_id: first.body.id })
    expect((await api('POST', `/channels/${dm.id}/typing`, { token: a.token })).status).toBe(204)
    expect((await sb.waitFor('TYPING_START')).d).toMatchObject({ channel_id: dm.id, user_id: a.id })
    // Another's message: neither edited nor deleted (no MANAGE_MESSAGES in a DM).
    expect((await api('DELETE', `/channels/${dm.id}/messages/${first.body.id}`, { token: b.token })).status).toBe(403)
    expect(
      (await api('PATCH', `/channels/${dm.id}/messages/${first.body.id}`, { token: b.token, body: { content: 'z' } }))
        .status,
    ).toBe(403)
    expect((await api('DELETE', `/channels/${dm.id}/messages/${first.body.id}`, { token: a.token })).status).toBe(204)
    for (const s of [sa, sb])
      expect((await s.waitFor('MESSAGE_DELETE')).d).toEqual({ id: first.body.id, channel_id: dm.id })

    // A third user: every route answers as for a channel that does not exist.
    const other = await makeUser()
    const so = await sockets.identified(other.token)
    for (const [method, path] of [
      ['GET', `/channels/${dm.id}`],
      ['GET', `/channels/${dm.id}/messages`],
      ['POST', `/channels/${dm.id}/messages`],
      ['GET', `/channels/${dm.id}/messages/${reply.body.id}`],
      ['POST', `/channels/${dm.id}/typing`],
    ] as const) {
      const r = await api(method, path, { token: other.token, body: method === 'POST' ? { content: 'hi' } : undefined })
      expect([path, r.status, r.body.code]).toEqual([path, 404, 10003])
    }
    // Guild-only routes refuse a DM as an unknown channel too.
    expect((await api('DELETE', `/channels/${dm.id}`, { token: a.token })).status).toBe(404)
    expect((await api('POST', `/channels/${dm.id}/invites`, { token: a.token, body: {} })).status).toBe(404)
    expect(so.dispatches('MESSAGE_CREATE')).toEqual([])
  })

  test('a block after the channel exists stops new messages both ways (50007); unblocked, they flow again', async () => {
    const [c, d] = [await makeUser(), await makeUser()]
    await befriend(c, d)
    const dm = (await open(c.token, d.id)).body
    expect((await send(d.token, dm.id, 'before')).status).toBe(200)
    expect((await api('PUT', `/users/@me/relationships/${d.id}`, { token: c.token, body: { type: 2 } })).status).toBe(
      204,
    )
    for (const token of [c.token, d.token]) {
      const r = await send(token, dm.id, 'after')
      expect([r.status, r.body]).toEqual([403, refusedDm])
      expect((await api('POST', `/channels/${dm.id}/typing`, { token })).status).toBe(403)
    }
    // History stays readable.
    expect((await api('GET', `/channels/${dm.id}/messages`, { token: d.token })).body.length).toBe(1)
    expect((await api('DELETE', `/users/@me/relationships/${d.id}`, { token: c.token })).status).toBe(204)
    expect((await send(d.token, dm.id, 'again')).status).toBe(200)
  })
})

describe('bots', () => {
  test('a bot DMs a member of its guild, no one else; its DIRECT_MESSAGES intent decides what its session gets', async () => {
    const { app, bot, owner, channelId } = await botInGuild()
    const token = `Bot ${app.bot_token}`
    const outsider = await makeUser()
    expect((await open(token, outsider.id)).body).toEqual(refusedDm)
    const dm = (await open(token, owner.id)).body
    expect(dm).toMatchObject({ type: 1, recipients: [{ id: owner.id }] })
    const { client: deaf } = await GatewayClient.identified(token, { intents: 1 })
    const { client: hearing } = await GatewayClient.identified(token, { intents: (1 << 12) | 1 })
    try {
      const posted = await send(owner.token, dm.id, 'hi bot')
      expect(posted.status).toBe(200)
      expect((await hearing.waitFor('MESSAGE_CREATE')).d).toMatchObject({
        id: posted.body.id,
        author: { id: owner.id },
      })
      // A guild message after it reaches both sessions; the deaf one got nothing before it (a session's events
      // keep their order).
      const later = await send(owner.token, channelId, 'in the guild')
      await deaf.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.id === later.body.id)
      expect(deaf.dispatches('MESSAGE_CREATE').map((f) => f.d.id)).toEqual([later.body.id])
      // The owner's side: the bot is the DM's other recipient.
      expect((await api('GET', `/channels/${dm.id}`, { token: owner.token })).body.recipients[0].id).toBe(bot.id)
    } finally {
      deaf.close()
      hearing.close()
    }
  })
})
