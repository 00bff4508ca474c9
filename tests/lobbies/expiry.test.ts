import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { sweepIdleLobbies } from '../../src/lobbies/idle'
import { api, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { rawRow, rawSql } from '../db/raw'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

const DAY = 24 * 3600 * 1000

/** Stand-in for a member connected to the lobby's voice (the gateway tests do it with op 17). */
async function holdOpen(lobbyId: string) {
  await rawSql("UPDATE lobby_members SET voice_session_id = 'test' WHERE lobby_id = ?", lobbyId)
  await rawSql('UPDATE lobbies SET idle_deadline = NULL WHERE id = ?', lobbyId)
}

describe('lobby secret expiry', () => {
  test('after 30 days nobody new joins with the secret; the lobby remains', async () => {
    const { app, bot, players } = await setup(3)
    const [a, b, c] = players
    const lobby = (await api('PUT', '/lobbies', { token: a.bearer, body: { secret: 'old-friends' } })).body
    await holdOpen(lobby.id)
    clock.advance(30 * DAY - 1000)
    // Access tokens live 7 days: fresh ones for the late arrivals.
    const bBearer = await bearerFor(b, app)
    const cBearer = await bearerFor(c, app)
    expect((await api('PUT', '/lobbies', { token: bBearer, body: { secret: 'old-friends' } })).body.id).toBe(lobby.id)
    clock.advance(1000)
    const late = await api('PUT', '/lobbies', { token: cBearer, body: { secret: 'old-friends' } })
    expect(late.status).toBe(200)
    expect(late.body.id).not.toBe(lobby.id)
    expect(late.body.members.map((m: any) => m.id)).toEqual([c.id])
    const old = await api('GET', `/lobbies/${lobby.id}`, { token: bot })
    expect(old.status).toBe(200)
    expect(old.body.members.map((m: any) => m.id)).toEqual([a.id, b.id])
  })

  test('an existing member asking again after expiry gets its lobby back, without a new one', async () => {
    const { app, players } = await setup(1)
    const lobby = (await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'mine' } })).body
    await holdOpen(lobby.id)
    clock.advance(31 * DAY)
    const again = await api('PUT', '/lobbies', { token: await bearerFor(players[0], app), body: { secret: 'mine' } })
    expect(again.body.id).toBe(lobby.id)
  })
})

describe('idle close', () => {
  test('a lobby with nobody connected closes after idle_timeout_seconds', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: players[0].id }] })
    const keep = await createLobby(bot, { idle_timeout_seconds: 120 })
    clock.advance(59_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(200)
    clock.advance(1000)
    expect(await sweepIdleLobbies()).toBeGreaterThanOrEqual(1)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
    expect((await api('GET', `/lobbies/${keep.id}`, { token: bot })).status).toBe(200)
  })

  test('PUT /lobbies defaults to 300 seconds; a connected member holds it open', async () => {
    const { bot, players } = await setup(1)
    const lobby = (await api('PUT', '/lobbies', { token: players[0].bearer, body: { secret: 'idle-default' } })).body
    const held = await createLobby(bot, { idle_timeout_seconds: 5, members: [{ id: players[0].id }] })
    await holdOpen(held.id)
    clock.advance(299_000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(200)
    clock.advance(1000)
    await sweepIdleLobbies()
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
    expect((await api('GET', `/lobbies/${held.id}`, { token: bot })).status).toBe(200)
  })

  test('the deadline lives in the database and the periodic sweeper closes it on its own', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot, { idle_timeout_seconds: 5 })
    const row = (await rawRow<{ idle_deadline: number }>('SELECT idle_deadline FROM lobbies WHERE id = ?', lobby.id))!
    expect(row.idle_deadline).toBeGreaterThan(clock.now())
    clock.advance(5000)
    for (let i = 0; i < 40; i++) {
      if ((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status === 404) break
      await Bun.sleep(100)
    }
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(404)
  })
})
