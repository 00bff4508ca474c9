// Merging a provisional account into a full account (issue 44, part 4): POST /oauth2/token with a code and the
// player's external credential, mid-session: the provisional player's sockets close, the lobby sees it leave and the
// full account join, its messages become the full account's, and the identity now names the full account (530010).
// A second merge is refused; a merge racing token requests has one outcome.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { lockUser } from '../../src/auth/lock'
import { transaction } from '../../src/db/client'
import { prepareMerge } from '../../src/provisional/merge'
import { addProvider } from '../../src/provisional/providers'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'
import { authorizeCode, bearerFor, REDIRECT, tokenRequest } from '../oauth2/helpers'
import { botToken, player } from './helpers'
import { TestIssuer } from './issuer'

const open: GatewayClient[] = []
let issuer: TestIssuer
beforeAll(async () => {
  await server()
  setConfig({ ...config(), externalAuthAllowPrivate: true })
  issuer = await TestIssuer.start()
})
afterAll(() => {
  setConfig({ ...config(), externalAuthAllowPrivate: false })
  issuer.stop()
})
afterEach(() => {
  for (const c of open.splice(0)) c.close()
  resetWorld()
})
async function socket(token: string) {
  const { client } = await GatewayClient.identified(token)
  open.push(client)
  return client
}

type App = Awaited<ReturnType<typeof makeApp>>
type User = Awaited<ReturnType<typeof makeUser>>

/** The full account authorises the application, and the code is exchanged with the player's credential. */
async function mergeInto(user: User, app: App, type: string, token: string) {
  const code = await authorizeCode(user, app, { scope: 'identify lobbies.write gateway.connect' })
  return await tokenRequest(
    '/oauth2/token',
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      external_auth_type: type,
      external_auth_token: token,
    },
    [app.id, app.client_secret],
  )
}

describe('POST /oauth2/token with external_auth_type and external_auth_token', () => {
  test('mid-session: lobby membership and messages move, the provisional sockets and tokens end, 530010 after', async () => {
    const app = await makeApp()
    const guest = await player(app, 'merge-me', 'Guest')
    const other = await makeUser()
    const otherBearer = await bearerFor(other, app, 'identify lobbies.write gateway.connect')
    const full = await makeUser()

    const lobby = (
      await api('PUT', '/lobbies', {
        token: guest.bearer,
        body: { secret: 'merge-lobby', member_metadata: { seat: '1' } },
      })
    ).body
    await api('PUT', '/lobbies', { token: otherBearer, body: { secret: 'merge-lobby' } })
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: guest.bearer, body: { content: 'before the merge' } })
    const guestSocket = await socket(guest.bearer)
    const otherSocket = await socket(otherBearer)
    const fullSocket = await socket(full.token)

    const merged = await mergeInto(full, app, 'DISCORD_BOT_ISSUED_ACCESS_TOKEN', guest.token.access_token)
    expect(merged.status).toBe(200)
    expect(merged.body).toMatchObject({ token_type: 'Bearer', scope: 'identify lobbies.write gateway.connect' })
    const fullBearer = `Bearer ${merged.body.access_token}`
    expect((await api('GET', '/users/@me', { token: fullBearer })).body.id).toBe(full.id)

    // The provisional account ends at once: its socket closes, its token no longer works.
    expect((await guestSocket.waitForClose(2000)).code).toBe(4004)
    expect((await api('GET', '/users/@me', { token: guest.bearer })).status).toBe(401)
    // The lobby sees the provisional member leave and the full account join (with its metadata).
    const removed = await otherSocket.waitFor('LOBBY_MEMBER_REMOVE')
    expect(removed.d.member.id).toBe(guest.id)
    const added = await otherSocket.waitFor('LOBBY_MEMBER_ADD')
    expect(added.d.member).toMatchObject({ id: full.id, metadata: { seat: '1' } })
    expect((await fullSocket.waitFor('LOBBY_CREATE')).d.id).toBe(lobby.id)
    const now = await api('GET', `/lobbies/${lobby.id}`, { token: fullBearer })
    expect(now.body.members.map((m: { id: string }) => m.id).sort()).toEqual([other.id, full.id].sort())
    const page = await api('GET', `/lobbies/${lobby.id}/messages`, { token: fullBearer })
    expect(page.body[0]).toMatchObject({ content: 'before the merge', author: { id: full.id } })
    // The full account chats in the lobby with its new token.
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: fullBearer, body: { content: 'merged' } })
    expect(
      (await otherSocket.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.content === 'merged')).d.author.id,
    ).toBe(full.id)

    // The identity names the full account now: the bot endpoint and the exchange answer 530010.
    const again = await botToken(app.bot_token, 'merge-me')
    expect([again.status, again.body.code]).toEqual([400, 530010])
  })

  test('OIDC: the identity merges once (a second merge 530014, the code spent); one identity per account (530023)', async () => {
    const app = await makeApp()
    await addProvider({ applicationId: app.id, type: 'oidc', issuer: issuer.issuer, audience: 'game' })
    const idToken = (sub: string) => issuer.token('game', { sub }, { now: clock.now() })
    const first = await api('POST', '/partner-sdk/token', {
      body: { client_id: app.id, external_auth_type: 'OIDC', external_auth_token: await idToken('oidc-merge') },
    })
    expect(first.status).toBe(200)
    const full = await makeUser()
    expect((await mergeInto(full, app, 'OIDC', await idToken('oidc-merge'))).status).toBe(200)
    const second = await mergeInto(full, app, 'OIDC', await idToken('oidc-merge'))
    expect([second.status, second.body.code]).toEqual([400, 530014])
    const exchanged = await api('POST', '/partner-sdk/token', {
      body: { client_id: app.id, external_auth_type: 'OIDC', external_auth_token: await idToken('oidc-merge') },
    })
    expect([exchanged.status, exchanged.body.code]).toEqual([400, 530010])
    // Another identity of this application into the same account: refused.
    await api('POST', '/partner-sdk/token', {
      body: { client_id: app.id, external_auth_type: 'OIDC', external_auth_token: await idToken('second-player') },
    })
    const third = await mergeInto(full, app, 'OIDC', await idToken('second-player'))
    expect([third.status, third.body.code]).toEqual([400, 530023])
    // A bad credential is refused before the code is spent, with its own code.
    const bad = await mergeInto(await makeUser(), app, 'OIDC', 'not.a.jwt')
    expect([bad.status, bad.body.code]).toEqual([400, 530020])
    const half = await tokenRequest(
      '/oauth2/token',
      {
        grant_type: 'authorization_code',
        code: await authorizeCode(full, app),
        redirect_uri: REDIRECT,
        external_auth_type: 'OIDC',
      },
      [app.id, app.client_secret],
    )
    expect([half.status, half.body.error]).toEqual([400, 'invalid_request'])
  })

  test('a merge racing token requests for the same identity: no token of the provisional account works after it', async () => {
    const app = await makeApp()
    const guest = await player(app, 'race-me')
    const full = await makeUser()
    const code = await authorizeCode(full, app, { scope: 'identify lobbies.write' })
    const merge = tokenRequest(
      '/oauth2/token',
      {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        external_auth_type: 'DISCORD_BOT_ISSUED_ACCESS_TOKEN',
        external_auth_token: guest.token.access_token,
      },
      [app.id, app.client_secret],
    )
    const requests = Array.from({ length: 20 }, () => botToken(app.bot_token, 'race-me'))
    const [merged, ...answers] = await Promise.all([merge, ...requests])
    expect(merged.status).toBe(200)
    for (const a of answers) {
      if (a.status === 200) {
        // Issued before the merge committed: ended with the account.
        expect((await api('GET', '/users/@me', { token: `Bearer ${a.body.access_token}` })).status).toBe(401)
      } else expect([a.status, a.body.code]).toEqual([400, 530010])
    }
    expect((await botToken(app.bot_token, 'race-me')).body.code).toBe(530010)
  })

  test('two merges of one identity into two accounts at once: exactly one succeeds, the other is 530014', async () => {
    const app = await makeApp()
    const guest = await player(app, 'twice')
    const [a, b] = [await makeUser(), await makeUser()]
    const results = await Promise.all([
      mergeInto(a, app, 'DISCORD_BOT_ISSUED_ACCESS_TOKEN', guest.token.access_token),
      mergeInto(b, app, 'DISCORD_BOT_ISSUED_ACCESS_TOKEN', guest.token.access_token),
    ])
    const statuses = results.map((r) => [r.status, r.body.code]).sort()
    // The loser's credential may already be dead when it is checked (401 50014), or it meets the merged identity.
    expect(statuses[0]).toEqual([200, undefined])
    expect([
      [400, 530014],
      [401, 50014],
    ]).toContainEqual(statuses[1])
  })

  test('530017 a locked provisional account; 530016 a provisional destination', async () => {
    const app = await makeApp()
    await addProvider({ applicationId: app.id, type: 'oidc', issuer: issuer.issuer, audience: 'game' })
    const idToken = (sub: string) => issuer.token('game', { sub }, { now: clock.now() })
    const exchange = async (sub: string) =>
      await api('POST', '/partner-sdk/token', {
        body: { client_id: app.id, external_auth_type: 'OIDC', external_auth_token: await idToken(sub) },
      })
    const made = await exchange('locked-one')
    const lockedId = (await api('GET', '/users/@me', { token: `Bearer ${made.body.access_token}` })).body.id
    await lockUser(lockedId)
    const refused = await mergeInto(await makeUser(), app, 'OIDC', await idToken('locked-one'))
    expect([refused.status, refused.body.code]).toEqual([400, 530017])
    // A provisional account cannot authorise a code (it has no session): the merge step refuses it all the same.
    const other = await exchange('destination')
    const provisionalId = (await api('GET', '/users/@me', { token: `Bearer ${other.body.access_token}` })).body.id
    await exchange('source')
    const prepared = await prepareMerge(app.id, 'OIDC', await idToken('source'))
    await expect(transaction((tx) => prepared.run(tx, provisionalId))).rejects.toMatchObject({ code: 530016 })
  })
})
