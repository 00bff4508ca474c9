import { afterEach, describe, expect, test } from 'bun:test'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { createLobby, metadata, setup } from './helpers'

afterEach(resetWorld)

describe('POST /lobbies', () => {
  test('creates a lobby with metadata, members, flags: 201 and the lobby object', async () => {
    const { app, bot, players } = await setup(2)
    const r = await api('POST', '/lobbies', {
      token: bot,
      body: {
        metadata: { topic: 'x' },
        members: [{ id: players[0].id, metadata: { role: 'host' }, flags: 1 }, { id: players[1].id }],
        idle_timeout_seconds: 60,
        flags: 1,
      },
    })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({
      id: expect.any(String),
      application_id: app.id,
      metadata: { topic: 'x' },
      members: [
        { id: players[0].id, metadata: { role: 'host' }, flags: 1 },
        { id: players[1].id, metadata: null, flags: 0 },
      ],
      flags: 1,
    })
    const empty = await api('POST', '/lobbies', { token: bot, body: {} })
    expect(empty.status).toBe(201)
    expect(empty.body).toMatchObject({ metadata: null, members: [], flags: 0 })
    expect(empty.body.linked_channel).toBeUndefined()
  })

  test('only a Bot token: user token 403 20002, bearer refused, no token 401', async () => {
    const { players } = await setup(1)
    const user = await api('POST', '/lobbies', { token: players[0].token, body: {} })
    expect(user.status).toBe(403)
    expect(user.body.code).toBe(20002)
    // The caller kind is checked before the body.
    expect((await api('POST', '/lobbies', { token: players[0].token, body: { members: 5 } })).body.code).toBe(20002)
    expect((await api('POST', '/lobbies', { token: players[0].bearer, body: {} })).status).toBe(401)
    expect((await api('POST', '/lobbies', { body: {} })).status).toBe(401)
  })

  test('limits: metadata 25 keys and 1024 chars per key and value, 25 members, idle 5-604800, flags', async () => {
    const { bot } = await setup(0)
    const ok = async (body: object) => expect((await api('POST', '/lobbies', { token: bot, body })).status).toBe(201)
    const bad = async (body: object, field: string) => {
      const r = await api('POST', '/lobbies', { token: bot, body })
      expect(r.status).toBe(400)
      expect(r.body.code).toBe(50035)
      expect(JSON.stringify(r.body.errors)).toContain(field)
    }
    await ok({ metadata: metadata(25) })
    await bad({ metadata: metadata(26) }, 'metadata')
    await ok({ metadata: metadata(1, 1024, 1024) })
    await bad({ metadata: metadata(1, 1025, 1) }, 'metadata')
    await bad({ metadata: metadata(1, 1, 1025) }, 'metadata')
    await bad({ metadata: { a: 5 } }, 'metadata')
    await bad({ metadata: ['a'] }, 'metadata')
    await ok({ metadata: null })
    await ok({ idle_timeout_seconds: 5 })
    await ok({ idle_timeout_seconds: 604800 })
    await bad({ idle_timeout_seconds: 4 }, 'NUMBER_TYPE_MIN')
    await bad({ idle_timeout_seconds: 604801 }, 'NUMBER_TYPE_MAX')
    await bad({ idle_timeout_seconds: 'soon' }, 'idle_timeout_seconds')
    await ok({ flags: 1 })
    await ok({ flags: null })
    await bad({ flags: 2 }, 'flags')

    const users = await Promise.all(Array.from({ length: 26 }, () => makeUser()))
    await ok({ members: users.slice(0, 25).map((u) => ({ id: u.id })) })
    await bad({ members: users.map((u) => ({ id: u.id })) }, 'members')
    await bad({ members: [{ id: users[0].id, flags: 2 }] }, 'members')
    await bad({ members: [{ id: users[0].id, metadata: metadata(26) }] }, 'members')
    await bad({ members: [{ id: 'abc' }] }, 'members')
  })

  test('an unknown user as member is 404 10013 and creates nothing', async () => {
    const { bot } = await setup(0)
    const r = await api('POST', '/lobbies', { token: bot, body: { members: [{ id: '123456789012345678' }] } })
    expect(r.status).toBe(404)
    expect(r.body.code).toBe(10013)
  })
})

describe('PUT /lobbies (join by secret or create)', () => {
  test('the first caller creates, the next joins; member_metadata and lobby_metadata apply', async () => {
    const { app, players } = await setup(2)
    const a = await api('PUT', '/lobbies', {
      token: players[0].bearer,
      body: { secret: 'party', lobby_metadata: { mode: 'duo' }, member_metadata: { skin: 'red' } },
    })
    expect(a.status).toBe(200)
    expect(a.body).toMatchObject({
      application_id: app.id,
      metadata: { mode: 'duo' },
      members: [{ id: players[0].id, metadata: { skin: 'red' }, flags: 0 }],
    })
    const b = await api('PUT', '/lobbies', { token: players[1].bearer, body: { secret: 'party' } })
    expect(b.status).toBe(200)
    expect(b.body.id).toBe(a.body.id)
    expect(b.body.members.map((m: any) => m.id)).toEqual([players[0].id, players[1].id])
    // Again: no duplicate membership.
    const again = await api('PUT', '/lobbies', {
      token: players[1].bearer,
      body: { secret: 'party', member_metadata: { skin: 'blue' } },
    })
    expect(again.body.members).toHaveLength(2)
    expect(again.body.members[1].metadata).toEqual({ skin: 'blue' })
  })

  test('secrets are per application, and a Bot may create or fetch without joining', async () => {
    const { bot, players } = await setup(1)
    const other = await makeApp()
    const otherUser = await makeUser()
    const mine = await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 's' } })
    const theirs = await api('PUT', '/lobbies', { token: await bearerFor(otherUser, other), body: { secret: 's' } })
    expect(theirs.body.id).not.toBe(mine.body.id)
    const viaBot = await api('PUT', '/lobbies', { token: bot, body: { secret: 's' } })
    expect(viaBot.status).toBe(200)
    expect(viaBot.body.id).toBe(mine.body.id)
    expect(viaBot.body.members).toHaveLength(1)
  })

  test('needs lobbies.write; user tokens 403 20002; secret 1-250 chars; idle default 300', async () => {
    const { players } = await setup(1, 'identify')
    const noScope = await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'x' } })
    expect(noScope.status).toBe(403)
    expect(noScope.body.code).toBe(50001)
    const user = await api('PUT', '/lobbies', { token: players[0].token, body: { secret: 'x' } })
    expect(user.status).toBe(403)
    expect(user.body.code).toBe(20002)
    const { players: ok } = await setup(1)
    expect((await api('PUT', '/lobbies', { token: ok[0].bearer, body: { secret: 'y'.repeat(250) } })).status).toBe(200)
    const long = await api('PUT', '/lobbies', { token: ok[0].bearer, body: { secret: 'y'.repeat(251) } })
    expect(long.status).toBe(400)
    expect(long.body.errors.secret).toBeDefined()
    expect((await api('PUT', '/lobbies', { token: ok[0].bearer, body: {} })).body.errors.secret._errors[0].code).toBe(
      'BASE_TYPE_REQUIRED',
    )
    expect(
      (await api('PUT', '/lobbies', { token: ok[0].bearer, body: { secret: 'z', idle_timeout_seconds: 4 } })).status,
    ).toBe(400)
    expect(
      (await api('PUT', '/lobbies', { token: ok[0].bearer, body: { secret: 'z', member_metadata: metadata(26) } }))
        .status,
    ).toBe(400)
    const { rawRow } = await import('../db/raw')
    const created = await api('PUT', '/lobbies', { token: ok[0].bearer, body: { secret: 'default-idle' } })
    const row = await rawRow('SELECT idle_timeout_seconds, secret_hash FROM lobbies WHERE id = ?', created.body.id)
    expect(row.idle_timeout_seconds).toBe(300)
    expect(row.secret_hash).not.toContain('default-idle')
  })
})

describe('GET, PATCH, DELETE /lobbies/{id}', () => {
  test('GET: the creating application, or an OAuth2 member; others 404 10031', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body).toEqual(lobby)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: players[0].bearer })).status).toBe(200)
    const outsider = await api('GET', `/lobbies/${lobby.id}`, { token: players[1].bearer })
    expect(outsider.status).toBe(404)
    expect(outsider.body.code).toBe(10031)
    const other = await makeApp()
    const foreign = await api('GET', `/lobbies/${lobby.id}`, { token: `Bot ${other.bot_token}` })
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe(10031)
    // Spec §4.1: a user session is refused, member or not (the web client reads with its first-party token: below).
    const session = await api('GET', `/lobbies/${lobby.id}`, { token: players[0].token })
    expect(session.status).toBe(403)
    expect(session.body.code).toBe(20002)
    expect((await api('GET', '/lobbies/123', { token: bot })).body.code).toBe(10031)
    expect((await api('GET', '/lobbies/nope', { token: bot })).body.code).toBe(10031)
  })

  test('PATCH changes metadata, flags and idle timeout; members replaces the list', async () => {
    const { bot, players } = await setup(3)
    const [a, b, c] = players
    const lobby = await createLobby(bot, {
      metadata: { k: 'v' },
      members: [{ id: a.id, metadata: { x: '1' } }, { id: b.id }],
    })
    const r = await api('PATCH', `/lobbies/${lobby.id}`, {
      token: bot,
      body: { flags: 1, idle_timeout_seconds: 600, members: [{ id: b.id, flags: 1 }, { id: c.id }] },
    })
    expect(r.status).toBe(200)
    expect(r.body.metadata).toEqual({ k: 'v' })
    expect(r.body.flags).toBe(1)
    expect(r.body.members).toEqual([
      { id: b.id, metadata: null, flags: 1 },
      { id: c.id, metadata: null, flags: 0 },
    ])
    const cleared = await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: null } })
    expect(cleared.body.metadata).toBeNull()
    expect(cleared.body.members).toHaveLength(2)
    const emptied = await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { members: [] } })
    expect(emptied.body.members).toEqual([])
  })

  test('PATCH refusals: bearer, user, other app, limits', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: players[0].bearer, body: {} })).status).toBe(401)
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: players[0].token, body: {} })).body.code).toBe(20002)
    const other = await makeApp()
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: `Bot ${other.bot_token}`, body: {} })).body.code).toBe(
      10031,
    )
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: metadata(26) } })).status).toBe(
      400,
    )
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: metadata(25) } })).status).toBe(
      200,
    )
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { idle_timeout_seconds: 604801 } })).status,
    ).toBe(400)
    const users = await Promise.all(Array.from({ length: 26 }, () => makeUser()))
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { members: users.map((u) => ({ id: u.id })) } }))
        .status,
    ).toBe(400)
    expect(
      (
        await api('PATCH', `/lobbies/${lobby.id}`, {
          token: bot,
          body: { members: users.slice(0, 25).map((u) => ({ id: u.id })) },
        })
      ).body.members,
    ).toHaveLength(25)
  })

  test('DELETE is idempotent for the creating application only', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const other = await makeApp()
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: `Bot ${other.bot_token}` })).body.code).toBe(10031)
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: players[0].bearer })).status).toBe(401)
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: players[0].token })).body.code).toBe(20002)
    const r = await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })
    expect(r.status).toBe(204)
    expect(r.body).toBeNull()
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
  })
})

/** The web client's first-party Bearer token of a user session (POST /oauth2/first-party/token). */
async function firstParty(session: string): Promise<string> {
  const r = await api('POST', '/oauth2/first-party/token', { token: session })
  expect(r.status).toBe(200)
  return `Bearer ${r.body.access_token}`
}

describe("GET /lobbies/{id} with the web client's first-party token", () => {
  test('a member reads the lobby as the Gateway shows it, every member named; anyone else gets 404 10031', async () => {
    const { bot, players } = await setup(3)
    const renamed = await api('PATCH', '/users/@me', { token: players[1].token, body: { global_name: 'Bee' } })
    const [a, b, outsider] = (await Promise.all(
      players.map(async (p) => ({ ...p, token: await firstParty(p.token) })),
    )) as typeof players
    expect(renamed.status).toBe(200)
    const lobby = await createLobby(bot, { members: [{ id: a.id }, { id: b.id, metadata: { team: 'red' } }] })

    const read = await api('GET', `/lobbies/${lobby.id}`, { token: a.token })
    expect(read.status).toBe(200)
    expect(read.body).toMatchObject({ id: lobby.id, application_id: lobby.application_id, voice_states: [] })
    expect(read.body.members).toEqual([
      {
        id: a.id,
        metadata: null,
        flags: 0,
        connected: false,
        user: expect.objectContaining({ id: a.id, username: expect.any(String) }),
      },
      {
        id: b.id,
        metadata: { team: 'red' },
        flags: 0,
        connected: false,
        user: expect.objectContaining({ id: b.id, global_name: 'Bee' }),
      },
    ])
    // A public user only: no e-mail or phone of another member.
    expect(Object.keys(read.body.members[1].user).sort()).toEqual(
      ['avatar', 'bot', 'discriminator', 'global_name', 'id', 'public_flags', 'username'].sort(),
    )
    // The bot's answer keeps Discord's REST shape.
    const asBot = await api('GET', `/lobbies/${lobby.id}`, { token: bot })
    expect(asBot.body.members[0]).toEqual({ id: a.id, metadata: null, flags: 0 })
    expect(asBot.body.voice_states).toBeUndefined()

    const unknownLobby = { code: 10031, message: 'Unknown Lobby' }
    for (const path of [`/lobbies/${lobby.id}`, '/lobbies/123', '/lobbies/99999999999999999999', '/lobbies/abc']) {
      const r = await api('GET', path, { token: outsider.token })
      expect(r.status).toBe(404)
      expect(r.body).toMatchObject({ code: 10031 })
    }
    expect((await api('GET', '/lobbies/123', { token: a.token })).body).toMatchObject(unknownLobby)

    // Removed: the very next read is refused (the lobby's rows are cached).
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${a.id}`, { token: bot })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: a.token })).status).toBe(404)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: b.token })).status).toBe(200)
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: b.token })).status).toBe(404)
  })

  test("another application's lobby: the web client reads only the ones it is in; a game's OAuth2 keeps to its own application", async () => {
    const first = await setup(1)
    const second = await setup(0)
    const [player] = first.players
    const web = await firstParty(player.token)
    const mine = await createLobby(second.bot, { members: [{ id: player.id }] })
    const notMine = await createLobby(second.bot, {})
    expect((await api('GET', `/lobbies/${mine.id}`, { token: web })).status).toBe(200)
    expect((await api('GET', `/lobbies/${notMine.id}`, { token: web })).status).toBe(404)
    expect((await api('GET', `/lobbies/${mine.id}`, { token: player.token })).status).toBe(403)
    // The player's OAuth2 token of the first application does not reach the second application's lobby.
    expect((await api('GET', `/lobbies/${mine.id}`, { token: player.bearer })).status).toBe(404)
    expect((await api('GET', `/lobbies/${mine.id}`, { token: first.bot })).status).toBe(404)
    // Every lobby route refuses user sessions.
    const patch = await api('PATCH', `/lobbies/${mine.id}`, { token: player.token, body: { metadata: {} } })
    expect(patch.status).toBe(403)
    expect((await api('GET', `/lobbies/${mine.id}/messages`, { token: player.token })).status).toBe(403)
    // The web client acts as a member, never as the lobby's application: no member changes, no moderation.
    const add = await api('PUT', `/lobbies/${mine.id}/members/${first.players[0].id}`, { token: web, body: {} })
    expect(add.status).toBe(401)
    const invite = await api('POST', `/lobbies/${mine.id}/members/@me/invites`, { token: web })
    expect(invite.body.code).toBe(10031)
    // It chats in the lobby and reads its history; a lobby it is not in stays unknown.
    const sent = await api('POST', `/lobbies/${mine.id}/messages`, { token: web, body: { content: 'hi from the web' } })
    expect(sent.status).toBe(201)
    expect(sent.body).toMatchObject({ lobby_id: mine.id, content: 'hi from the web', author: { id: player.id } })
    const history = await api('GET', `/lobbies/${mine.id}/messages`, { token: web })
    expect(history.body.map((m: { content: string }) => m.content)).toEqual(['hi from the web'])
    expect((await api('GET', `/lobbies/${notMine.id}/messages`, { token: web })).body.code).toBe(10031)
    const stranger = await api('POST', `/lobbies/${notMine.id}/messages`, { token: web, body: { content: 'x' } })
    expect(stranger.body.code).toBe(10031)
  })
})
