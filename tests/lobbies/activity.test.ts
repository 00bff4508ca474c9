// The idle rule: a lobby is active while a member has an identified Gateway session or is in its call; messages and
// member changes start the countdown over; the deadline is a database column.
import { afterEach, describe, expect, test } from 'bun:test'
import { config } from '../../src/config'
import { clock } from '../../src/core/clock'
import { sweepIdleLobbies } from '../../src/lobbies/idle'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { rawRow } from '../db/raw'
import { createLobby, setup } from './helpers'

const open: GatewayClient[] = []
afterEach(() => {
  open.splice(0).forEach((c) => c.close())
  resetWorld()
})

const SCOPE = 'identify lobbies.write gateway.connect'

async function online(token: string) {
  const { client } = await GatewayClient.identified(token)
  open.push(client)
  return client
}

const deadline = async (lobbyId: string) =>
  (await rawRow<{ idle_deadline: number | null }>('SELECT idle_deadline FROM lobbies WHERE id = ?', lobbyId))
    ?.idle_deadline

/** The deadline is `ms` from now (within the time the request took). */
async function expectDeadlineIn(lobbyId: string, ms: number) {
  const d = await deadline(lobbyId)
  expect(d).toBeNumber()
  expect(Math.abs(d! - (clock.now() + ms))).toBeLessThan(1500)
}

async function until(check: () => boolean | Promise<boolean>, ms = 3000) {
  const end = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time')
    await Bun.sleep(20)
  }
}

async function exists(bot: string, lobbyId: string) {
  await sweepIdleLobbies()
  return (await api('GET', `/lobbies/${lobbyId}`, { token: bot })).status === 200
}

describe('members on the Gateway keep a lobby active', () => {
  test('a PUT lobby (300 s) outlives its timeout while its member is online; it closes 300 s after they leave', async () => {
    const { bot, players } = await setup(1, SCOPE)
    const [a] = players
    const socket = await online(a.bearer)
    const lobby = (await api('PUT', '/lobbies', { token: a.bearer, body: { secret: 'chatting' } })).body
    expect(await deadline(lobby.id)).toBeNull()
    clock.advance(3600_000)
    expect(await exists(bot, lobby.id)).toBe(true)

    socket.close(1000)
    await until(async () => (await deadline(lobby.id)) !== null)
    await expectDeadlineIn(lobby.id, 300_000)
    clock.advance(299_000)
    expect(await exists(bot, lobby.id)).toBe(true)
    clock.advance(1000)
    expect(await exists(bot, lobby.id)).toBe(false)
  })

  test("a member coming online stops a running countdown; a user session counts for all of the user's lobbies", async () => {
    const { bot, players } = await setup(1, SCOPE)
    const [a] = players
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: a.id }] })
    expect(await deadline(lobby.id)).toBeNumber()
    clock.advance(50_000)
    await online(a.token)
    await until(async () => (await deadline(lobby.id)) === null)
    clock.advance(120_000)
    expect(await exists(bot, lobby.id)).toBe(true)
  })

  test('while one of two online members leaves, the lobby stays; when the last one goes, the countdown starts', async () => {
    const { bot, players } = await setup(2, SCOPE)
    const [a, b] = players
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: a.id }, { id: b.id }] })
    const sa = await online(a.bearer)
    const sb = await online(b.token)
    await until(async () => (await deadline(lobby.id)) === null)
    sa.close(1000)
    await sa.waitForClose()
    await Bun.sleep(100)
    expect(await deadline(lobby.id)).toBeNull()
    sb.close(1000)
    await until(async () => (await deadline(lobby.id)) !== null)
    clock.advance(60_000)
    expect(await exists(bot, lobby.id)).toBe(false)
  })

  test('an OAuth2 session of another application does not keep the lobby active; an online member added stops the countdown', async () => {
    const { app, bot, players } = await setup(1, SCOPE)
    const [a] = players
    const other = await makeApp()
    await online(await bearerFor(a, other, SCOPE))
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: a.id }] })
    expect(await deadline(lobby.id)).toBeNumber()
    const solo = await createLobby(bot, { idle_timeout_seconds: 60 })
    await online(await bearerFor(a, app, SCOPE))
    await until(async () => (await deadline(lobby.id)) === null)
    expect(await deadline(solo.id)).toBeNumber()
    await api('PUT', `/lobbies/${solo.id}/members/${a.id}`, { token: bot })
    expect(await deadline(solo.id)).toBeNull()
    clock.advance(600_000)
    expect(await exists(bot, solo.id)).toBe(true)
    // Removing the only online member: the countdown runs again.
    await api('DELETE', `/lobbies/${solo.id}/members/${a.id}`, { token: bot })
    await expectDeadlineIn(solo.id, 60_000)
  })

  test('a dropped socket (not 1000) keeps the session resumable, and the lobby active until the resume window ends', async () => {
    const { bot, players } = await setup(1, SCOPE)
    const [a] = players
    const socket = await online(a.bearer)
    const lobby = await createLobby(bot, { idle_timeout_seconds: 5, members: [{ id: a.id }] })
    expect(await deadline(lobby.id)).toBeNull()
    socket.close(4000)
    await socket.waitForClose()
    await Bun.sleep(100)
    expect(await deadline(lobby.id)).toBeNull()
    clock.advance(config().gatewayResumeWindowMs)
    await until(async () => (await deadline(lobby.id)) !== null)
  })
})

describe('activity starts the countdown over', () => {
  test('messages push the deadline back', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: players[0].id }] })
    clock.advance(50_000)
    expect(
      (
        await api('POST', `/lobbies/${lobby.id}/messages`, {
          token: players[0].bearer,
          body: { content: 'still here' },
        })
      ).status,
    ).toBe(201)
    clock.advance(50_000)
    expect(await exists(bot, lobby.id)).toBe(true)
    clock.advance(10_000)
    expect(await exists(bot, lobby.id)).toBe(false)
  })

  test('member changes (add, update, remove, bulk) and lobby changes push the deadline back', async () => {
    const { bot, players } = await setup(3)
    const [a, b, c] = players
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60, members: [{ id: a.id }] })
    const steps = [
      () => api('PUT', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot }),
      () => api('PUT', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot, body: { metadata: { ready: '1' } } }),
      () => api('DELETE', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot }),
      () => api('POST', `/lobbies/${lobby.id}/members/bulk`, { token: bot, body: [{ id: c.id }] }),
      () => api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: { round: '2' } } }),
    ]
    for (const step of steps) {
      clock.advance(50_000)
      expect((await step()).status).toBeLessThan(300)
      await expectDeadlineIn(lobby.id, 60_000)
    }
    clock.advance(59_000)
    expect(await exists(bot, lobby.id)).toBe(true)
    clock.advance(1000)
    expect(await exists(bot, lobby.id)).toBe(false)
  })

  test('a member joining a PUT lobby by its secret pushes the deadline back', async () => {
    const { bot, players } = await setup(2)
    const [a, b] = players
    const lobby = (
      await api('PUT', '/lobbies', { token: a.bearer, body: { secret: 'late-joiner', idle_timeout_seconds: 60 } })
    ).body
    clock.advance(50_000)
    await api('PUT', '/lobbies', { token: b.bearer, body: { secret: 'late-joiner' } })
    await expectDeadlineIn(lobby.id, 60_000)
    clock.advance(50_000)
    expect(await exists(bot, lobby.id)).toBe(true)
  })
})
