// suite: one pass
// Two SDK clients in one lobby against a real server: the Gateway up (one with zlib-stream, one without), create and
// join by secret, members and metadata kept current from the Gateway, chat both ways as `message` events, history,
// a send retried with its nonce posted once, leave seen by the other; and friends between the same two users.
import { afterAll, describe, expect, test } from 'bun:test'
import {
  Client,
  type RelationshipEvents,
  type LobbyMember,
  type LobbyMessage,
  type Presence,
  type Relationship,
  type RelationshipChange,
  RelationshipType,
} from '../../client/src/index'
import { startServer } from './server'

const server = await startServer()
const app = await server.newApp()
const [alice, bob] = await Promise.all([server.player(app), server.player(app)])
const a = new Client({ baseUrl: server.url })
a.setToken(alice.bearer, 'Bearer')
const b = new Client({ baseUrl: server.url, token: `Bearer ${bob.bearer}`, gateway: { compress: false } })
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

/** Resolves with the first `n` events the register function delivers. */
function collect<T>(n: number, register: (push: (value: T) => void) => void, ms = 5000): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const got: T[] = []
    const timer = setTimeout(() => reject(new Error(`only ${got.length} of ${n} events: ${JSON.stringify(got)}`)), ms)
    register((value) => {
      got.push(value)
      if (got.length === n) {
        clearTimeout(timer)
        resolve(got)
      }
    })
  })
}

describe('lobbies between two SDK clients', () => {
  test('connect resolves at READY, with and without zlib-stream', async () => {
    const [readyA, readyB] = await Promise.all([a.gateway.connect(), b.gateway.connect()])
    expect(readyA.user.id).toBe(alice.id)
    expect(readyB.user.id).toBe(bob.id)
    expect(readyA.session_type).toBe('oauth')
    expect(a.gateway.connected).toBe(true)
    // A's frames came deflated (binary, one zlib context), B's as text.
    expect((a.gateway as unknown as { socket: WebSocket }).socket.url).toContain('compress=zlib-stream')
    expect((b.gateway as unknown as { socket: WebSocket }).socket.url).not.toContain('compress')
    // A second connect() while up is the same session.
    expect((await a.gateway.connect()).session_id).toBe(readyA.session_id)
  })

  let secret = ''
  test('create and join by secret; each side sees the other as a member, metadata included', async () => {
    secret = `match-${Date.now()}`
    const lobbyA = await a.lobbies.createOrJoin({
      secret,
      lobbyMetadata: { mode: 'ffa' },
      memberMetadata: { team: 'red' },
    })
    expect(lobbyA.metadata).toEqual({ mode: 'ffa' })
    expect([...lobbyA.members.keys()]).toEqual([alice.id])
    const added = collect<LobbyMember>(1, (push) => lobbyA.on('memberAdd', push))
    const lobbyB = await b.lobbies.createOrJoin({ secret, memberMetadata: { team: 'blue' } })
    expect(lobbyB.id).toBe(lobbyA.id)
    expect(lobbyB.members.get(alice.id)?.metadata).toEqual({ team: 'red' })
    const [member] = await added
    expect(member).toMatchObject({ id: bob.id, metadata: { team: 'blue' } })
    expect(lobbyA.members.get(bob.id)?.metadata).toEqual({ team: 'blue' })
    // The same lobby object for the same id.
    expect(await a.lobbies.get(lobbyA.id)).toBe(lobbyA)
  })

  test('chat: each send arrives on the other side as a message event, in order; history has them', async () => {
    const lobbyA = await a.lobbies.createOrJoin({ secret })
    const lobbyB = await b.lobbies.createOrJoin({ secret })
    const atA = collect<LobbyMessage>(2, (push) => lobbyA.on('message', (m) => m.author.id === bob.id && push(m)))
    const atB = collect<LobbyMessage>(1, (push) => lobbyB.on('message', (m) => m.author.id === alice.id && push(m)))
    await lobbyB.send('gl', { metadata: { kind: 'chat' } })
    await lobbyB.send('hf')
    await lobbyA.send('gg')
    expect((await atA).map((m) => [m.content, m.metadata])).toEqual([
      ['gl', { kind: 'chat' }],
      ['hf', undefined],
    ])
    expect((await atB)[0]).toMatchObject({ content: 'gg', lobby_id: lobbyA.id })
    const last = await lobbyA.history({ limit: 50 })
    expect(last.map((m) => m.content)).toEqual(['gg', 'hf', 'gl'])
    expect((await lobbyA.history({ limit: 1 })).map((m) => m.content)).toEqual(['gg'])
    expect((await lobbyA.history({ before: last[0].id, limit: 1 })).map((m) => m.content)).toEqual(['hf'])
  })

  test('a send retried with its nonce posts once', async () => {
    const lobbyB = await b.lobbies.createOrJoin({ secret })
    const first = await lobbyB.send('once', { nonce: 'retry-1' })
    const again = await lobbyB.send('once', { nonce: 'retry-1' })
    expect(again.id).toBe(first.id)
    const history = await lobbyB.history({ limit: 10 })
    expect(history.filter((m) => m.content === 'once').length).toBe(1)
  })

  test('a member update and a leave reach the other live lobby', async () => {
    const lobbyA = await a.lobbies.createOrJoin({ secret })
    const updated = collect<LobbyMember>(1, (push) => lobbyA.on('memberUpdate', push))
    await b.lobbies.createOrJoin({ secret, memberMetadata: { team: 'green' } })
    expect((await updated)[0]).toMatchObject({ id: bob.id, metadata: { team: 'green' } })
    expect(lobbyA.members.get(bob.id)?.metadata).toEqual({ team: 'green' })
    const removed = collect<LobbyMember>(1, (push) => lobbyA.on('memberRemove', push))
    const lobbyB = b.lobbies.live.get(lobbyA.id)!
    await lobbyB.leave()
    expect(lobbyB.active).toBe(false)
    expect((await removed)[0].id).toBe(bob.id)
    expect([...lobbyA.members.keys()]).toEqual([alice.id])
  })
})

describe('linked channel', () => {
  test('a member the application lets link (flag 1) links a guild channel of theirs and invites to it', async () => {
    const carol = await server.player(app)
    const c = new Client({ baseUrl: server.url, token: `Bearer ${carol.bearer}` })
    const asUser = new Client({ baseUrl: server.url, token: carol.token })
    const asBot = new Client({ baseUrl: server.url, token: `Bot ${app.bot}` })
    const lobby = await c.lobbies.createOrJoin({ secret: `linked-${Date.now()}` })
    await asBot.rest.put(`/lobbies/${lobby.id}/members/${carol.id}`, { body: { flags: 1 } })
    const guild = await asUser.rest.post('/guilds', { body: { name: 'SDK guild' } })
    const channels = await asUser.rest.get(`/guilds/${guild.id}/channels`)
    const text = channels.find((ch) => ch.type === 0)!
    await lobby.linkChannel(text.id)
    expect((lobby.linkedChannel as { id: string }).id).toBe(text.id)
    const invite = await lobby.createInvite()
    expect(invite.code).toBeString()
    await lobby.linkChannel(null)
    expect(lobby.linkedChannel).toBeUndefined()
  })
})

describe('friends (client/src/relationships.ts)', () => {
  test('a request by username, accepted live over the Gateway; the new friend online; block ends it', async () => {
    // User sessions (an OAuth2 token needs relationships.read/write for the same calls).
    const ua = new Client({ baseUrl: server.url, token: alice.token })
    const ub = new Client({ baseUrl: server.url, token: bob.token })
    try {
      const [fa, fb] = [ua.relationships, ub.relationships]
      await Promise.all([ua.gateway.connect(), ub.gateway.connect()])
      const bobName = (await ub.rest.get('/users/@me')).username
      const asked = collect<Relationship>(1, (push) =>
        ub.gateway.on('RELATIONSHIP_ADD', push as RelationshipEvents['RELATIONSHIP_ADD']),
      )
      await fa.request(bobName)
      expect((await asked)[0]).toMatchObject({ id: alice.id, type: RelationshipType.INCOMING_REQUEST })
      await expect(fa.request('no-such-user-here')).rejects.toMatchObject({ status: 400, code: 80004 })

      const online = collect<Presence>(1, (push) =>
        ua.gateway.on('PRESENCE_UPDATE', push as RelationshipEvents['PRESENCE_UPDATE']),
      )
      await fb.addFriend(alice.id)
      expect((await online)[0]).toMatchObject({ user: { id: bob.id }, status: 'online' })
      expect((await fa.list()).map((r) => [r.id, r.type])).toEqual([[bob.id, RelationshipType.FRIEND]])

      const gone = collect<RelationshipChange>(1, (push) =>
        ua.gateway.on('RELATIONSHIP_REMOVE', push as RelationshipEvents['RELATIONSHIP_REMOVE']),
      )
      await fb.block(alice.id)
      expect((await gone)[0]).toMatchObject({ id: bob.id, type: RelationshipType.FRIEND })
      expect((await fb.list()).map((r) => [r.id, r.type])).toEqual([[alice.id, RelationshipType.BLOCKED]])
      await fb.remove(alice.id)
      expect(await fb.list()).toEqual([])
    } finally {
      await Promise.all([ua.close(), ub.close()])
    }
  })
})
