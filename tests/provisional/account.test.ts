// What a provisional account is (issue 44, part 3): with its Bearer token (sdk.social_layer) it joins a lobby by
// secret, chats and talks with a full account on real sockets and a real call, renames itself with PATCH /users/@me;
// it has no way into the login, password, MFA and settings routes (it has no e-mail or password: /auth/forgot finds
// nothing to send, and answers as for any unknown login); a lock or a deletion by an operator ends its tokens
// and its sockets at once.
import { afterEach, describe, expect, test } from 'bun:test'
import { completeLogin } from '../../src/accounts/complete-login'
import { cachedUser } from '../../src/accounts/store'
import { deleteUser, lockUser } from '../../src/auth/lock'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
import { until, VoicePeer } from '../voice/peer'
import { botToken, player } from './helpers'

const open: { close(): unknown }[] = []
afterEach(async () => {
  for (const c of open.splice(0)) await c.close()
  resetWorld()
})
async function socket(token: string) {
  const { client, ready } = await GatewayClient.identified(token)
  open.push(client)
  return { client, ready }
}

describe('a provisional player and a full account in one lobby', () => {
  test('join by secret, member list, chat both ways on the Gateway, a call in which each hears the other', async () => {
    const app = await makeApp()
    const guest = await player(app, 'guest-7', 'Guest Seven')
    const full = await makeUser()
    const fullBearer = await bearerFor(full, app, 'identify lobbies.write gateway.connect')

    const g = await socket(guest.bearer)
    expect(g.ready.user).toMatchObject({ id: guest.id, global_name: 'Guest Seven', public_flags: 1 << 23 })
    const f = await socket(fullBearer)

    const made = await api('PUT', '/lobbies', { token: guest.bearer, body: { secret: 'duo-secret' } })
    expect(made.status).toBe(200)
    const lobbyId = made.body.id
    const joined = await api('PUT', '/lobbies', { token: fullBearer, body: { secret: 'duo-secret' } })
    expect(joined.body.id).toBe(lobbyId)
    expect(joined.body.members.map((m: { id: string }) => m.id)).toEqual([guest.id, full.id])
    expect((await g.client.waitFor('LOBBY_MEMBER_ADD')).d.member.id).toBe(full.id)
    // Who the member is, with its display name, as another member sees it.
    const seen = await api('GET', `/users/${guest.id}`, { token: full.token })
    expect(seen.body).toMatchObject({ id: guest.id, global_name: 'Guest Seven', username: `player_${guest.id}` })

    const hi = await api('POST', `/lobbies/${lobbyId}/messages`, { token: guest.bearer, body: { content: 'hi' } })
    expect(hi.status).toBe(201)
    expect((await f.client.waitFor('LOBBY_MESSAGE_CREATE')).d).toMatchObject({
      content: 'hi',
      author: { id: guest.id, global_name: 'Guest Seven' },
    })
    await api('POST', `/lobbies/${lobbyId}/messages`, { token: fullBearer, body: { content: 'hello' } })
    expect(
      (await g.client.waitFor((fr) => fr.t === 'LOBBY_MESSAGE_CREATE' && fr.d.content === 'hello')).d.author.id,
    ).toBe(full.id)
    const page = await api('GET', `/lobbies/${lobbyId}/messages`, { token: guest.bearer })
    expect(page.body.map((m: { content: string }) => m.content)).toEqual(['hello', 'hi'])

    const a = await VoicePeer.connect(guest.bearer, guest.id)
    const b = await VoicePeer.connect(fullBearer, full.id)
    open.push(a, b)
    for (const p of [a, b]) p.voiceStates(lobbyId)
    for (const p of [a, b]) p.startSending()
    await until('each hears the other', () => a.from(full.id) >= 10 && b.from(guest.id) >= 10, 10_000)
    // Voice presence both ways on the lobby's sockets.
    await g.client.waitFor((fr) => fr.t === 'LOBBY_MEMBER_CONNECT' && fr.d.member.id === full.id, 5000)
    await f.client.waitFor((fr) => fr.t === 'LOBBY_MEMBER_CONNECT' && fr.d.member.id === guest.id, 5000)
  }, 20_000)
})

describe('its profile and what it cannot reach', () => {
  test('PATCH /users/@me: the display name with its token (USER_UPDATE on its socket); nothing else', async () => {
    const app = await makeApp()
    const guest = await player(app, 'renamer')
    const g = await socket(guest.bearer)
    const renamed = await api('PATCH', '/users/@me', { token: guest.bearer, body: { global_name: 'New Name' } })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ id: guest.id, global_name: 'New Name' })
    expect(renamed.body.email).toBeUndefined()
    expect((await g.client.waitFor('USER_UPDATE')).d).toMatchObject({ id: guest.id, global_name: 'New Name' })
    expect((await api('GET', '/users/@me', { token: guest.bearer })).body.global_name).toBe('New Name')
    // The limit is Discord's: 32.
    const long = await api('PATCH', '/users/@me', { token: guest.bearer, body: { global_name: 'n'.repeat(33) } })
    expect(long.status).toBe(400)
    expect(
      (await api('PATCH', '/users/@me', { token: guest.bearer, body: { global_name: 'n'.repeat(32) } })).status,
    ).toBe(200)
    for (const body of [{ email: 'a@example.test' }, { new_password: 'a long enough passphrase', password: 'x' }])
      expect((await api('PATCH', '/users/@me', { token: guest.bearer, body })).status).toBe(403)
    // A full account's token of the same scope changes nothing: its profile is its own session's.
    const full = await makeUser()
    const fullBearer = await bearerFor(full, app, 'sdk.social_layer')
    const refused = await api('PATCH', '/users/@me', { token: fullBearer, body: { global_name: 'Nope' } })
    expect(refused.status).toBe(403)
    expect(refused.body.code).toBe(50001)
  })

  test('a rename reaches its lobby-mates and its friends: PRESENCE_UPDATE with the new user; strangers hear nothing', async () => {
    const app = await makeApp()
    const guest = await player(app, 'renamed-mate', 'Old Name')
    const [mate, friend, stranger] = [await makeUser(), await makeUser(), await makeUser()]
    const mateBearer = await bearerFor(mate, app, 'identify lobbies.write gateway.connect')
    const made = await api('PUT', '/lobbies', { token: guest.bearer, body: { secret: 'rename-secret' } })
    await api('PUT', '/lobbies', { token: mateBearer, body: { secret: 'rename-secret' } })
    expect((await api('PUT', `/users/@me/relationships/${friend.id}`, { token: guest.bearer, body: {} })).status).toBe(
      204,
    )
    expect((await api('PUT', `/users/@me/relationships/${guest.id}`, { token: friend.token, body: {} })).status).toBe(
      204,
    )
    const [m, f, s] = [await socket(mateBearer), await socket(friend.token), await socket(stranger.token)]
    await socket(guest.bearer) // online: its presence shows as friends see it

    expect((await api('PATCH', '/users/@me', { token: guest.bearer, body: { global_name: 'New Name' } })).status).toBe(
      200,
    )
    const renamed = (fr: { t: string | null; d: any }) =>
      fr.t === 'PRESENCE_UPDATE' && fr.d.user.id === guest.id && fr.d.user.global_name === 'New Name'
    for (const seen of [m, f]) {
      const { d } = await seen.client.waitFor(renamed)
      expect(d.user).toEqual({
        id: guest.id,
        username: `player_${guest.id}`,
        global_name: 'New Name',
        discriminator: '0',
        avatar: null,
        bot: false,
        public_flags: 1 << 23,
      })
      expect(d.status).toBe('online')
    }
    // USER_UPDATE stays the user's own.
    for (const seen of [m, f, s]) expect(seen.client.frames.some((fr) => fr.t === 'USER_UPDATE')).toBe(false)
    await s.client.expectNo('PRESENCE_UPDATE', 150)
    expect(made.status).toBe(200)
  })

  test('no login, password, MFA or settings: the routes refuse it, and no flow can give it a session', async () => {
    const app = await makeApp()
    const guest = await player(app, 'no-login')
    const login = await api('POST', '/auth/login', {
      body: { login: `player_${guest.id}`, password: 'anything at all' },
    })
    expect(login.status).toBe(400)
    expect(login.body.token).toBeUndefined()
    for (const [method, path, body] of [
      ['GET', '/users/@me/settings', undefined],
      ['PATCH', '/users/@me/settings', { locale: 'fr' }],
      ['POST', '/users/@me/mfa/totp/enable', { secret: 'A'.repeat(16), code: '123456' }],
      ['GET', '/auth/sessions', undefined],
      ['POST', '/users/@me/delete', { password: 'x' }],
    ] as const)
      expect((await api(method, path, { token: guest.bearer, body })).status).toBe(401)
    const row = (await cachedUser(guest.id))!
    const client = { ip: '127.0.0.1', os: null, platform: null, location: null, fingerprint: undefined }
    await expect(completeLogin(row, { client } as never)).rejects.toMatchObject({ status: 403, code: 50002 })
  })
})

describe('an operator ends it', () => {
  test('a lock ends its tokens and its sockets at once; no new token is issued for it', async () => {
    const app = await makeApp()
    const guest = await player(app, 'to-lock')
    const g = await socket(guest.bearer)
    await lockUser(guest.id)
    // Well before the Gateway's 5 s re-check of credentials.
    expect((await g.client.waitForClose(1500)).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(401)
    const again = await botToken(app.bot_token, 'to-lock')
    expect(again.status).toBe(403)
    expect(again.body.code).toBe(50001)
  })

  test('`user delete` ends its tokens and its sockets at once', async () => {
    const app = await makeApp()
    const guest = await player(app, 'to-delete')
    const g = await socket(guest.bearer)
    const done = await deleteUser(guest.id)
    expect(done).toMatchObject({ id: guest.id, deleted: true })
    expect((await g.client.waitForClose(1500)).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(401)
    expect((await botToken(app.bot_token, 'to-delete')).status).toBe(403)
  })
})
