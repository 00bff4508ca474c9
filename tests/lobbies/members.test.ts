import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { snowflake } from '../../src/core/snowflake'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { rawBatch } from '../db/raw'
import { createLobby, metadata, setup } from './helpers'

afterEach(resetWorld)

/** Users inserted straight into the database (no password hashing): for the large-count limits. */
async function bulkUsers(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => snowflake())
  await rawBatch(
    'INSERT INTO users (id, username, created_at) VALUES (?, ?, ?)',
    ids.map((id) => [id, `bulk_${id}`, clock.now()]),
  )
  return ids
}

async function addMembersDirectly(lobbyId: string, applicationId: string, userIds: string[]) {
  await rawBatch(
    'INSERT INTO lobby_members (lobby_id, user_id, application_id, flags, joined_at) VALUES (?, ?, ?, 0, ?)',
    userIds.map((id) => [lobbyId, id, applicationId, clock.now()]),
  )
}

describe('PUT /lobbies/{id}/members/{user}', () => {
  test('adds with no body at all, an empty body, or null fields; updates an existing member', async () => {
    const { bot, players } = await setup(3)
    const lobby = await createLobby(bot)
    const none = await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })
    expect(none.status).toBe(200)
    expect(none.body).toEqual({ id: players[0].id, metadata: null, flags: 0 })
    const empty = await api('PUT', `/lobbies/${lobby.id}/members/${players[1].id}`, {
      token: bot,
      raw: '',
      headers: { 'content-type': 'application/json' },
    })
    expect(empty.status).toBe(200)
    const nulls = await api('PUT', `/lobbies/${lobby.id}/members/${players[2].id}`, {
      token: bot,
      body: { metadata: null, flags: null },
    })
    expect(nulls.body).toEqual({ id: players[2].id, metadata: null, flags: 0 })
    const update = await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, {
      token: bot,
      body: { metadata: { a: 'b' }, flags: 1 },
    })
    expect(update.body).toEqual({ id: players[0].id, metadata: { a: 'b' }, flags: 1 })
    const members = (await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members
    expect(members).toHaveLength(3)
    // Omitted means default: a bare PUT resets the member.
    expect((await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot, body: {} })).body).toEqual({
      id: players[0].id,
      metadata: null,
      flags: 0,
    })
  })

  test('refusals: unknown user 10013, unknown lobby 10031, other app, user token, limits', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot)
    expect((await api('PUT', `/lobbies/${lobby.id}/members/123456789012345678`, { token: bot })).body.code).toBe(10013)
    expect((await api('PUT', `/lobbies/123456789012345678/members/${players[0].id}`, { token: bot })).body.code).toBe(
      10031,
    )
    const other = await makeApp()
    expect(
      (await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: `Bot ${other.bot_token}` })).body
        .code,
    ).toBe(10031)
    expect(
      (await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: players[0].token })).body.code,
    ).toBe(20002)
    expect(
      (await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot, body: { flags: 2 } })).status,
    ).toBe(400)
    expect(
      (
        await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, {
          token: bot,
          body: { metadata: metadata(26) },
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, {
          token: bot,
          body: { metadata: metadata(1, 1, 1025) },
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api('PUT', `/lobbies/${lobby.id}/members/${players[0].id}`, {
          token: bot,
          body: { metadata: metadata(25, 1024, 1024) },
        })
      ).status,
    ).toBe(200)
  })

  test('a lobby holds 1000 members; the 1001st is refused', async () => {
    const { app, bot, players } = await setup(2)
    const lobby = (await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'full-house' } })).body
    await addMembersDirectly(lobby.id, app.id, await bulkUsers(998))
    const [last, over] = await bulkUsers(2)
    expect((await api('PUT', `/lobbies/${lobby.id}/members/${last}`, { token: bot })).status).toBe(200)
    const r = await api('PUT', `/lobbies/${lobby.id}/members/${over}`, { token: bot })
    expect(r.status).toBe(400)
    expect(r.body.code).toBe(50035)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members).toHaveLength(1000)
    // Bulk over the cap is refused as a whole; updating existing members is still fine.
    const bulk = await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
      token: bot,
      body: [{ id: last, flags: 1 }, { id: over }],
    })
    expect(bulk.status).toBe(400)
    const update = await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
      token: bot,
      body: [{ id: last, flags: 1 }],
    })
    expect(update.body).toEqual([{ id: last, metadata: null, flags: 1 }])
    // Joining by secret is refused too; a PATCH replacing members within the cap works.
    expect((await api('PUT', '/lobbies', { token: players[1].bearer, body: { secret: 'full-house' } })).status).toBe(
      400,
    )
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members).toHaveLength(1000)
  })

  test('a user is in at most 100 lobbies of an application', async () => {
    const { bot, players } = await setup(1)
    const user = players[0]
    for (let i = 0; i < 99; i++) await createLobby(bot, { members: [{ id: user.id }] })
    const hundredth = await createLobby(bot)
    expect((await api('PUT', `/lobbies/${hundredth.id}/members/${user.id}`, { token: bot })).status).toBe(200)
    const extra = await createLobby(bot)
    const r = await api('PUT', `/lobbies/${extra.id}/members/${user.id}`, { token: bot })
    expect(r.status).toBe(400)
    expect((await api('POST', '/lobbies', { token: bot, body: { members: [{ id: user.id }] } })).status).toBe(400)
    expect((await api('PUT', '/lobbies', { token: user.bearer, body: { secret: 'one-too-many' } })).status).toBe(400)
    // Bulk silently leaves the user out (Discord's rule) and adds the others.
    const other = await makeUser()
    const bulk = await api('POST', `/lobbies/${extra.id}/members/bulk`, {
      token: bot,
      body: [{ id: user.id }, { id: other.id }],
    })
    expect(bulk.status).toBe(200)
    expect(bulk.body.map((m: any) => m.id)).toEqual([other.id])
    // Another application's lobbies do not count.
    const otherApp = await makeApp()
    expect(
      (await api('POST', '/lobbies', { token: `Bot ${otherApp.bot_token}`, body: { members: [{ id: user.id }] } }))
        .status,
    ).toBe(201)
  })
})

describe('DELETE members', () => {
  test('removes a member; safe when not a member; fails for an unknown lobby', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }, { id: players[1].id }] })
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })).status).toBe(204)
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })).status).toBe(204)
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/123456789012345678`, { token: bot })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members.map((m: any) => m.id)).toEqual([
      players[1].id,
    ])
    expect(
      (await api('DELETE', `/lobbies/123456789012345678/members/${players[1].id}`, { token: bot })).body.code,
    ).toBe(10031)
    expect(
      (await api('DELETE', `/lobbies/${lobby.id}/members/${players[1].id}`, { token: players[1].token })).body.code,
    ).toBe(20002)
    expect(
      (await api('DELETE', `/lobbies/${lobby.id}/members/${players[1].id}`, { token: players[1].bearer })).status,
    ).toBe(401)
  })

  test('@me: an OAuth2 member leaves a lobby it joined by secret; needs lobbies.write', async () => {
    const { bot, players } = await setup(2)
    const lobby = (await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'leave-me' } })).body
    await api('PUT', '/lobbies', { token: players[1].bearer, body: { secret: 'leave-me' } })
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: players[0].bearer })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: players[0].bearer })).status).toBe(404)
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: players[0].bearer })).status).toBe(204)
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: players[1].token })).body.code).toBe(20002)
    const { players: scoped } = await setup(1, 'identify')
    const r = await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: scoped[0].bearer })
    expect(r.status).toBe(403)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members.map((m: any) => m.id)).toEqual([
      players[1].id,
    ])
  })

  test('@me: a lobby created with POST /lobbies cannot be left by its members (403 50001); the application removes them', async () => {
    const { bot, players } = await setup(2)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }, { id: players[1].id }] })
    const r = await api('DELETE', `/lobbies/${lobby.id}/members/@me`, { token: players[0].bearer })
    expect(r.status).toBe(403)
    expect(r.body).toEqual({ code: 50001, message: 'Missing Access' })
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members.map((m: any) => m.id)).toEqual([
      players[0].id,
      players[1].id,
    ])
    expect((await api('DELETE', `/lobbies/${lobby.id}/members/${players[0].id}`, { token: bot })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members.map((m: any) => m.id)).toEqual([
      players[1].id,
    ])
  })

  test('a lobby created with POST /lobbies cannot be joined with PUT /lobbies, whatever the secret', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { metadata: { secret: 'guess' } })
    for (const secret of ['guess', lobby.id, '']) {
      const r = await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret } })
      if (r.status === 200) expect(r.body.id).not.toBe(lobby.id)
    }
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members).toEqual([])
  })
})

describe('POST /lobbies/{id}/members/bulk', () => {
  test('mixes add, update and remove; returns the upserted members', async () => {
    const { bot, players } = await setup(3)
    const [a, b, c] = players
    const lobby = await createLobby(bot, { members: [{ id: a.id }, { id: b.id }] })
    const r = await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
      token: bot,
      body: [
        { id: a.id, metadata: { k: 'v' }, flags: 1 },
        { id: b.id, remove_member: true },
        { id: c.id, remove_member: null },
      ],
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual([
      { id: a.id, metadata: { k: 'v' }, flags: 1 },
      { id: c.id, metadata: null, flags: 0 },
    ])
    const members = (await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body.members
    expect(members.map((m: any) => m.id).sort()).toEqual([a.id, c.id].sort())
  })

  test('the body is a bare array of 1-25; unknown users 404 10013; Bot only', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot)
    const users = await Promise.all(Array.from({ length: 26 }, () => makeUser()))
    expect((await api('POST', `/lobbies/${lobby.id}/members/bulk`, { token: bot, body: [] })).status).toBe(400)
    const over = await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
      token: bot,
      body: users.map((u) => ({ id: u.id })),
    })
    expect(over.status).toBe(400)
    expect(over.body.code).toBe(50035)
    const max = await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
      token: bot,
      body: users.slice(0, 25).map((u) => ({ id: u.id })),
    })
    expect(max.status).toBe(200)
    expect(max.body).toHaveLength(25)
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
          token: bot,
          body: { members: [{ id: players[0].id }] },
        })
      ).status,
    ).toBe(400)
    expect(
      (await api('POST', `/lobbies/${lobby.id}/members/bulk`, { token: bot, body: [{ id: '123456789012345678' }] }))
        .body.code,
    ).toBe(10013)
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
          token: bot,
          body: [{ id: players[0].id, remove_member: 'yes' }],
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
          token: bot,
          body: [{ id: players[0].id, metadata: metadata(26) }],
        })
      ).status,
    ).toBe(400)
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
          token: players[0].token,
          body: [{ id: players[0].id }],
        })
      ).body.code,
    ).toBe(20002)
    const other = await makeApp()
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/members/bulk`, {
          token: `Bot ${other.bot_token}`,
          body: [{ id: players[0].id }],
        })
      ).body.code,
    ).toBe(10031)
  })
})
