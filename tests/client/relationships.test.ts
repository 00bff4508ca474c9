// suite: one pass
// The SDK's friends against a real server (issue 45): the unified friends list (a Discord friend, a game friend, one
// who is both, each once, online first with its presence from the Gateway), and a game invite sent and read through
// client.relationships.
import { afterAll, expect, test } from 'bun:test'
import { Client } from '../../client/src/index'
import { grant, startServer } from './server'

const server = await startServer()
const app = await server.newApp()
const SCOPE = 'identify gateway.connect lobbies.write relationships.read relationships.write'
const [alice, bob, carol] = await Promise.all([server.newUser(), server.newUser(), server.newUser()])
const clientOf = async (user: { token: string }) =>
  new Client({ baseUrl: server.url, token: `Bearer ${(await grant(server.url, user.token, app, SCOPE)).access_token}` })
const [a, b, c] = await Promise.all([clientOf(alice), clientOf(bob), clientOf(carol)])
afterAll(async () => {
  await Promise.all([a.close(), b.close(), c.close()])
})

test('unifiedFriends: Discord friends and game friends once each, online first, presence from the Gateway', async () => {
  // Carol: a Discord friend and a game friend; Bob: a game friend only.
  await a.relationships.addFriend(carol.id)
  await c.relationships.addFriend(alice.id)
  await a.relationships.addGameFriend(bob.id)
  await b.relationships.addGameFriend(alice.id)
  await a.relationships.addGameFriend({ username: (await c.rest.get('/users/@me')).username })
  await c.relationships.addGameFriend(alice.id)
  await Promise.all([a.gateway.connect(), b.gateway.connect()])
  const heard = new Promise<void>((resolve) =>
    a.gateway.on('dispatch', (type, d: any) => type === 'PRESENCE_UPDATE' && d.status === 'dnd' && resolve()),
  )
  b.gateway.send(3, { status: 'dnd', since: null, afk: false, activities: [{ name: 'The game', type: 0 }] })
  await heard

  const friends = await a.relationships.unifiedFriends()
  expect(friends.map((f) => [f.id, f.discord, f.game, f.presence.status])).toEqual([
    [bob.id, false, true, 'dnd'],
    [carol.id, true, true, 'offline'],
  ])
  expect(friends[0].presence.activities).toEqual([{ name: 'The game', type: 0, application_id: app.id }])
  expect((await a.relationships.gameList()).map((r) => r.id).sort()).toEqual([bob.id, carol.id].sort())
})

test('a game invite through the SDK: sent, read with its secret by the recipient alone, declined', async () => {
  const joinable = new Promise<void>((resolve) =>
    b.gateway.on('dispatch', (t, d: any) => t === 'PRESENCE_UPDATE' && d.activities[0]?.party && resolve()),
  )
  const got = new Promise<any>((resolve) =>
    b.gateway.on('dispatch', (t, d) => t === 'GAME_INVITE_CREATE' && resolve(d)),
  )
  a.gateway.send(3, {
    status: 'online',
    since: null,
    afk: false,
    activities: [{ name: 'The game', type: 0, party: { id: 'p' }, secrets: { join: 'sdk-secret' } }],
  })
  await joinable
  const id = await a.relationships.sendInvite(bob.id, { content: 'join me' })
  expect((await got).invite_id).toBe(id)
  expect((await b.relationships.invites())[0].activity?.secrets?.join).toBe('sdk-secret')
  expect((await a.relationships.invites())[0].activity?.secrets).toBeUndefined()
  await b.relationships.deleteInvite(id)
  expect(await a.relationships.invites()).toEqual([])
})
