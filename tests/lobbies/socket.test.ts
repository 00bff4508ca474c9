// Lobby events on real Gateway sockets: members (user and OAuth2 sessions) and the application's bot receive them;
// another application's bot and outsiders do not. Op 17 over the socket starts a member's call (tests/voice/ has the
// rest of the call).
import { afterEach, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld } from '../helpers'
import { createLobby, setup } from './helpers'

const open: GatewayClient[] = []
afterEach(() => {
  open.splice(0).forEach((c) => c.close())
  resetWorld()
})
async function socket(token: string) {
  const { client } = await GatewayClient.identified(token)
  open.push(client)
  return client
}

test('lobby lifecycle events reach exactly the members and the owning bot', async () => {
  const { app, bot, players } = await setup(2, 'identify lobbies.write gateway.connect')
  const [a, b] = players
  const other = await makeApp()
  const outsider = await makeUser()
  const botSocket = await socket(app.bot_token)
  const otherBot = await socket(other.bot_token)
  const aUser = await socket(a.token)
  const bOauth = await socket(b.bearer)
  const out = await socket(outsider.token)

  const lobby = await createLobby(bot, { members: [{ id: a.id }] })
  const created = await aUser.waitFor('LOBBY_CREATE')
  expect(created.d.id).toBe(lobby.id)
  expect(created.d.members[0]).toEqual({ id: a.id, metadata: null, flags: 0, connected: false })
  await botSocket.waitFor('LOBBY_CREATE')

  await api('PUT', `/lobbies/${lobby.id}/members/${b.id}`, { token: bot })
  const add = await bOauth.waitFor('LOBBY_MEMBER_ADD')
  expect(add.d).toEqual({
    member: { id: b.id, metadata: null, flags: 0, connected: false },
    lobby_id: lobby.id,
    application_id: app.id,
  })
  await aUser.waitFor('LOBBY_MEMBER_ADD')

  const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: b.bearer, body: { content: 'gg' } })
  expect(sent.status).toBe(201)
  for (const s of [aUser, bOauth, botSocket])
    expect((await s.waitFor('LOBBY_MESSAGE_CREATE')).d).toMatchObject({ content: 'gg', lobby_id: lobby.id })

  // Op 17 on the OAuth2 session starts its call: the server's offer comes to that session only.
  bOauth.send(17, [{ lobby_id: lobby.id, self_mute: false, self_deaf: false }])
  expect((await bOauth.waitFor('LOBBY_VOICE_SERVER_OFFER')).d).toMatchObject({ lobby_id: lobby.id, revision: 1 })

  await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })
  expect((await aUser.waitFor('LOBBY_DELETE')).d).toMatchObject({ id: lobby.id })
  await botSocket.waitFor('LOBBY_DELETE')
  expect((await bOauth.waitFor('LOBBY_VOICE_SERVER_CLOSE')).d).toMatchObject({
    lobby_id: lobby.id,
    reason: 'lobby_deleted',
  })

  for (const t of [
    'LOBBY_CREATE',
    'LOBBY_MEMBER_ADD',
    'LOBBY_MESSAGE_CREATE',
    'LOBBY_VOICE_SERVER_OFFER',
    'LOBBY_DELETE',
  ]) {
    await out.expectNo(t, 20)
    await otherBot.expectNo(t, 20)
    if (t === 'LOBBY_VOICE_SERVER_OFFER') for (const s of [aUser, botSocket]) await s.expectNo(t, 20)
  }
})
