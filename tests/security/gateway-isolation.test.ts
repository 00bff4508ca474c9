// What each Gateway session sees, on real sockets with two applications and two users (README, "What a Gateway
// session sees"), and that every way a credential ends closes the sockets that identified with it, within a second.
import { afterEach, describe, expect, test } from 'bun:test'
import { lockUser } from '../../src/auth/lock'
import { tracked } from '../gateway-client'
import { api, databaseEnv, makeApp, makeUser, resetWorld, server } from '../helpers'
import { makeGuild, join } from '../guilds/helpers'
import { mfaTicket, totpCode, userWithKey, userWithTotp } from '../mfa/helpers'
import { authorizeCode, grantTokens, REDIRECT, tokenRequest, type TestApp } from '../oauth2/helpers'
import { cli } from '../ops/process-helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  resetWorld()
})

const SDK = 'identify gateway.connect lobbies.write'

async function identifiedAs(token: string) {
  const c = await sockets.connect()
  const ready = await c.identify(token)
  return { c, ready }
}

async function lobbyOf(app: TestApp, members: string[] = []) {
  const r = await api('POST', '/lobbies', {
    token: `Bot ${app.bot_token}`,
    body: { members: members.map((id) => ({ id })) },
  })
  expect(r.status).toBe(201)
  return r.body.id as string
}

const say = (app: TestApp, lobbyId: string, content: string) =>
  api('POST', `/lobbies/${lobbyId}/messages`, { token: `Bot ${app.bot_token}`, body: { content } })

describe('an OAuth2 session sees only its own application', () => {
  test("app A adding the user to A's lobby (PUT member, bulk, POST) reaches A's session and the user's, not B's", async () => {
    const [appA, appB] = [await makeApp(), await makeApp()]
    const user = await makeUser()
    const asA = await identifiedAs(`Bearer ${(await grantTokens(user, appA, SDK)).access_token}`)
    const asB = await identifiedAs(`Bearer ${(await grantTokens(user, appB, SDK)).access_token}`)
    const own = await identifiedAs(user.token)

    const viaPut = await lobbyOf(appA)
    expect(
      (await api('PUT', `/lobbies/${viaPut}/members/${user.id}`, { token: `Bot ${appA.bot_token}`, body: {} })).status,
    ).toBe(200)
    const viaBulk = await lobbyOf(appA)
    const bulk = await api('POST', `/lobbies/${viaBulk}/members/bulk`, {
      token: `Bot ${appA.bot_token}`,
      body: [{ id: user.id, metadata: { secret: 'only for A' } }],
    })
    expect(bulk.status).toBe(200)
    const viaCreate = await lobbyOf(appA, [user.id])

    for (const id of [viaPut, viaBulk, viaCreate]) {
      await asA.c.waitFor((f) => f.t === 'LOBBY_CREATE' && f.d.id === id)
      await own.c.waitFor((f) => f.t === 'LOBBY_CREATE' && f.d.id === id)
      const said = await say(appA, id, `hello ${id}`)
      expect(said.status).toBe(201)
      await asA.c.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.lobby_id === id)
      await own.c.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.lobby_id === id)
    }
    // B's session saw none of it; its own application's lobby still reaches it.
    const mine = await lobbyOf(appB, [user.id])
    await asB.c.waitFor((f) => f.t === 'LOBBY_CREATE' && f.d.id === mine)
    const seenByB = asB.c.dispatches('LOBBY_CREATE').map((f) => f.d.id)
    expect(seenByB).toEqual([mine])
    expect(asB.c.dispatches('LOBBY_MESSAGE_CREATE')).toEqual([])
    expect(asB.c.dispatches('LOBBY_MEMBER_ADD')).toEqual([])

    // Removed from A's lobby: A's session hears LOBBY_DELETE, B's nothing.
    await api('DELETE', `/lobbies/${viaPut}/members/${user.id}`, { token: `Bot ${appA.bot_token}` })
    await asA.c.waitFor((f) => f.t === 'LOBBY_DELETE' && f.d.id === viaPut)
    await asB.c.expectNo('LOBBY_DELETE', 150)
  })

  test('without lobbies.write an OAuth2 session follows no lobby, even of its own application', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const narrow = await identifiedAs(
      `Bearer ${(await grantTokens(user, app, 'identify gateway.connect')).access_token}`,
    )
    const full = await identifiedAs(`Bearer ${(await grantTokens(user, app, SDK)).access_token}`)
    const lobbyId = await lobbyOf(app, [user.id])
    await full.c.waitFor('LOBBY_CREATE')
    await say(app, lobbyId, 'hi')
    await full.c.waitFor('LOBBY_MESSAGE_CREATE')
    expect(narrow.c.dispatches('LOBBY_CREATE')).toEqual([])
    expect(narrow.c.dispatches('LOBBY_MESSAGE_CREATE')).toEqual([])
  })
})

describe('an OAuth2 session sees guilds only with `guilds`, and never what is said in them', () => {
  test('READY guilds, GUILD_CREATE and MESSAGE_CREATE per scope; the user session sees all', async () => {
    const app = await makeApp()
    const { owner, guild, channelId } = await makeGuild()
    const user = await join(channelId, owner)
    const bare = await identifiedAs(`Bearer ${(await grantTokens(user, app, 'identify gateway.connect')).access_token}`)
    const withGuilds = await identifiedAs(
      `Bearer ${(await grantTokens(user, app, 'identify gateway.connect guilds')).access_token}`,
    )
    const own = await identifiedAs(user.token)
    expect(bare.ready.guilds).toEqual([])
    expect(withGuilds.ready.guilds.map((g: { id: string }) => g.id)).toEqual([guild.id])
    expect(own.ready.guilds.map((g: { id: string }) => g.id)).toEqual([guild.id])

    const said = await api('POST', `/channels/${channelId}/messages`, { token: owner.token, body: { content: 'psst' } })
    expect(said.status).toBe(200)
    await own.c.waitFor('MESSAGE_CREATE')
    // A second guild the user joins later: its object reaches the session with `guilds` only.
    const second = await makeGuild('Second')
    await join(second.channelId, second.owner, user)
    await own.c.waitFor((f) => f.t === 'GUILD_CREATE' && f.d.id === second.guild.id)
    await withGuilds.c.waitFor((f) => f.t === 'GUILD_CREATE' && f.d.id === second.guild.id)
    await api('POST', `/channels/${second.channelId}/messages`, { token: second.owner.token, body: { content: 'x' } })
    await own.c.waitFor((f) => f.t === 'MESSAGE_CREATE' && f.d.channel_id === second.channelId)
    for (const s of [bare, withGuilds]) {
      expect(s.c.dispatches('MESSAGE_CREATE')).toEqual([])
      expect(s.c.dispatches('GUILD_MEMBER_ADD')).toEqual([])
    }
    expect(bare.c.dispatches('GUILD_CREATE')).toEqual([])
    // Account events are the user's own sessions' only.
    await api('PATCH', '/users/@me/settings', { token: user.token, body: { theme: 'light' } })
    await own.c.waitFor('USER_SETTINGS_UPDATE')
    for (const s of [bare, withGuilds]) expect(s.c.dispatches('USER_SETTINGS_UPDATE')).toEqual([])
  })
})

/** Wait for a close and say how long it took: every revocation closes its sockets within a second. */
async function closedWithin(c: Awaited<ReturnType<typeof identifiedAs>>['c'], ms = 1000) {
  const closed = await c.waitForClose(ms + 500)
  expect(closed.code).toBe(4004)
}

describe('an ended credential closes its sockets (4004) on every path', () => {
  test('POST /oauth2/token/revoke (access or refresh token) closes that family only', async () => {
    const app = await makeApp()
    const user = await makeUser()
    for (const which of ['access_token', 'refresh_token'] as const) {
      const tokens = await grantTokens(user, app, SDK)
      const other = await grantTokens(user, app, SDK)
      const revoked = await identifiedAs(`Bearer ${tokens.access_token}`)
      const kept = await identifiedAs(`Bearer ${other.access_token}`)
      const r = await tokenRequest('/oauth2/token/revoke', { token: tokens[which] }, [app.id, app.client_secret])
      expect(r.status).toBe(200)
      await closedWithin(revoked.c)
      expect(kept.c.ws.readyState).toBe(WebSocket.OPEN)
      // The socket is gone, so no op 17 or message reaches anything through it; REST refuses the token too.
      expect((await api('GET', '/users/@me', { token: `Bearer ${tokens.access_token}` })).status).toBe(401)
    }
  })

  test('a reused refresh token revokes the family and closes its sockets, including the rotated token’s', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const first = await grantTokens(user, app, SDK)
    const refresh = (token: string) =>
      tokenRequest('/oauth2/token', { grant_type: 'refresh_token', refresh_token: token }, [app.id, app.client_secret])
    const rotated = await refresh(first.refresh_token)
    expect(rotated.status).toBe(200)
    const live = await identifiedAs(`Bearer ${rotated.body.access_token}`)
    expect((await refresh(first.refresh_token)).status).toBe(400) // theft detected
    await closedWithin(live.c)
  })

  test('DELETE /oauth2/tokens/{id} (the user removes the application) closes its sessions, not other apps’', async () => {
    const [appA, appB] = [await makeApp(), await makeApp()]
    const user = await makeUser()
    const a = await identifiedAs(`Bearer ${(await grantTokens(user, appA, SDK)).access_token}`)
    const b = await identifiedAs(`Bearer ${(await grantTokens(user, appB, SDK)).access_token}`)
    const listed = await api('GET', '/oauth2/tokens', { token: user.token })
    expect(listed.status).toBe(200)
    const entry = listed.body.find((e: { application: { id: string } }) => e.application.id === appA.id)
    expect(entry.scopes.sort()).toEqual(SDK.split(' ').sort())
    // Another user cannot remove it.
    const stranger = await makeUser()
    expect((await api('DELETE', `/oauth2/tokens/${entry.id}`, { token: stranger.token })).status).toBe(404)
    expect((await api('DELETE', `/oauth2/tokens/${entry.id}`, { token: user.token })).status).toBe(204)
    await closedWithin(a.c)
    expect(b.c.ws.readyState).toBe(WebSocket.OPEN)
    const after = await api('GET', '/oauth2/tokens', { token: user.token })
    expect(after.body.map((e: { application: { id: string } }) => e.application.id)).toEqual([appB.id])
  })

  test('logout and a password change close the sessions they end', async () => {
    const user = await makeUser()
    const login = (await api('POST', '/auth/login', { body: { login: user.email, password: user.password } })).body
    const other = await identifiedAs(login.token)
    const current = await identifiedAs(user.token)
    const changed = await api('PATCH', '/users/@me', {
      token: user.token,
      body: { password: user.password, new_password: 'another correct horse battery' },
    })
    expect(changed.status).toBe(200)
    await closedWithin(other.c)
    // The current session continues under its new token; logging that out closes its socket.
    await current.c.waitFor('AUTH_SESSION_CHANGE')
    expect((await api('POST', '/auth/logout', { token: changed.body.token, body: {} })).status).toBe(204)
    await closedWithin(current.c)
  })

  test('user lock from the CLI (another process) closes user and OAuth2 sockets within a second', async () => {
    await server()
    const app = await makeApp()
    const user = await makeUser()
    const bearer = await identifiedAs(`Bearer ${(await grantTokens(user, app, SDK)).access_token}`)
    const own = await identifiedAs(user.token)
    const out = await cli({ ...process.env, ...databaseEnv() }, ['user', 'lock', '--id', user.id])
    expect(out.code).toBe(0)
    await Promise.all([closedWithin(bearer.c), closedWithin(own.c)])
  })
})

describe('a locked account authenticates nowhere until its password is reset', () => {
  test('an MFA ticket issued before the lock is refused after it', async () => {
    const user = await userWithTotp()
    const ticket = (await mfaTicket(user)).ticket
    await lockUser(user.id)
    const r = await api('POST', '/auth/mfa/totp', { body: { ticket, code: totpCode(user.secret) } })
    expect(r.status).toBe(400)
    expect(r.body.token).toBeUndefined()
  })

  test('OAuth2: the access token (REST and Gateway), the refresh token and an unexchanged code all fail', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const tokens = await grantTokens(user, app, SDK)
    const code = await authorizeCode(user, app, { scope: SDK })
    await lockUser(user.id)
    expect((await api('GET', '/users/@me', { token: `Bearer ${tokens.access_token}` })).status).toBe(401)
    const c = await sockets.connect()
    c.send(2, { token: `Bearer ${tokens.access_token}`, properties: {} })
    expect((await c.waitForClose()).code).toBe(4004)
    const refreshed = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      [app.id, app.client_secret],
    )
    expect(refreshed.status).toBe(400)
    const exchanged = await tokenRequest(
      '/oauth2/token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT },
      [app.id, app.client_secret],
    )
    expect(exchanged.status).toBe(400)
    expect(exchanged.body.error).toBe('invalid_grant')
  })

  test('a handoff token minted before the lock buys nothing', async () => {
    const user = await makeUser()
    const made = await api('POST', '/auth/handoff', { token: user.token, body: { key: 'k-lock' } })
    expect(made.status).toBe(200)
    await lockUser(user.id)
    const r = await api('POST', '/auth/handoff/exchange', {
      body: { key: 'k-lock', handoff_token: made.body.handoff_token },
    })
    expect(r.status).toBe(400)
    expect(r.body.token).toBeUndefined()
  })

  test('a passkey ceremony started before the lock is refused after it', async () => {
    const user = await userWithKey()
    const start = await api('POST', '/auth/conditional/start')
    await lockUser(user.id)
    const r = await api('POST', '/auth/conditional/finish', {
      body: { ticket: start.body.ticket, credential: user.key.assert(start.body.challenge) },
    })
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
    expect(r.body.token).toBeUndefined()
  })
})
