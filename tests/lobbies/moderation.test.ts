// Issue 28, WIRE.md §1: PUT /lobbies/{id}/messages/{message.id}/moderation-metadata. The lobby's application (Bot
// token) writes back what its moderation found: at most 5 keys, keys up to 1024 characters, values up to 2000 (each
// limit passes at its edge and fails one past it); 204; LOBBY_MESSAGE_UPDATE with edited_timestamp to the lobby on
// real Gateway sockets, MESSAGE_UPDATE for the message's copy in a linked channel; GET .../messages shows it.
import { afterEach, describe, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { makeGuild } from '../guilds/helpers'
import { api, makeApp, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'
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

const path = (lobbyId: string, messageId: string) => `/lobbies/${lobbyId}/messages/${messageId}/moderation-metadata`

/** A lobby with one member, and a message of that member. */
async function world() {
  const { app, bot, players } = await setup(1, 'identify lobbies.write gateway.connect')
  const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
  const sent = await api('POST', `/lobbies/${lobby.id}/messages`, {
    token: players[0].bearer,
    body: { content: 'gg ez' },
  })
  expect(sent.status).toBe(201)
  return { app, bot, player: players[0], lobby, message: sent.body as { id: string; timestamp: string } }
}

/** n keys of the given key and value lengths. */
function dict(n: number, keyLength = 4, valueLength = 4): Record<string, string> {
  const out: Record<string, string> = {}
  for (let i = 0; i < n; i++) out[String(i).padStart(keyLength, 'k')] = 'v'.repeat(valueLength)
  return out
}

describe('limits at their edges', () => {
  test('keys: 5 pass, 6 fail; key length 1024 passes, 1025 fails; value length 2000 passes, 2001 fails', async () => {
    const { bot, lobby, message } = await world()
    const put = (body: unknown) => api('PUT', path(lobby.id, message.id), { token: bot, body })
    const passes: unknown[] = [
      dict(5),
      dict(1, 1024),
      dict(1, 4, 2000),
      dict(5, 1024, 2000),
      {},
      { '': '' },
      { __proto__x: 'a', constructor: 'b' },
    ]
    for (const body of passes)
      expect([JSON.stringify(body).slice(0, 40), (await put(body)).status]).toEqual([
        JSON.stringify(body).slice(0, 40),
        204,
      ])
    const six = await put(dict(6))
    expect([six.status, six.body.code]).toEqual([400, 50035])
    expect(six.body.errors._errors[0]).toEqual({
      code: 'BASE_TYPE_MAX_LENGTH',
      message: 'Must be 5 or fewer in length.',
    })
    const longKey = await put(dict(1, 1025))
    expect([longKey.status, longKey.body.code]).toEqual([400, 50035])
    expect(longKey.body.errors._errors[0]).toEqual({
      code: 'BASE_TYPE_MAX_LENGTH',
      message: 'Keys must be 1024 or fewer in length.',
    })
    const longValue = await put({ verdict: 'v'.repeat(2001) })
    expect([longValue.status, longValue.body.code]).toEqual([400, 50035])
    expect(longValue.body.errors.verdict._errors[0]).toEqual({
      code: 'BASE_TYPE_MAX_LENGTH',
      message: 'Must be 2000 or fewer in length.',
    })
    // Values must be strings; the body must be an object.
    const notString = await put({ score: 0.5, ok: 'yes' })
    expect(notString.body.errors).toEqual({
      score: { _errors: [{ code: 'BASE_TYPE_STRING', message: 'Could not interpret value as string.' }] },
    })
    for (const raw of ['["a"]', '"text"', '12']) {
      const r = await api('PUT', path(lobby.id, message.id), { token: bot, raw })
      expect([raw, r.status, r.body.code]).toEqual([raw, 400, 50035])
    }
    // "__proto__" is a key like any other.
    expect((await api('PUT', path(lobby.id, message.id), { token: bot, raw: '{"__proto__":"x"}' })).status).toBe(204)
    expect((await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body[0].moderation_metadata).toEqual(
      JSON.parse('{"__proto__":"x"}'),
    )
    expect((await put({ __proto__x: 'a', constructor: 'b' })).status).toBe(204)
    const broken = await api('PUT', path(lobby.id, message.id), { token: bot, raw: '{"a":' })
    expect([broken.status, broken.body.code]).toEqual([400, 50109])
    // A refused body changed nothing: the last accepted one stands.
    const [stored] = (await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body
    expect(stored.moderation_metadata).toEqual({ __proto__x: 'a', constructor: 'b' })
  })

  test('a body that is absent or null clears, as {} does', async () => {
    const { bot, lobby, message } = await world()
    expect((await api('PUT', path(lobby.id, message.id), { token: bot, body: { a: 'b' } })).status).toBe(204)
    expect((await api('PUT', path(lobby.id, message.id), { token: bot })).status).toBe(204)
    const [stored] = (await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body
    expect(stored.moderation_metadata).toEqual({})
    expect((await api('PUT', path(lobby.id, message.id), { token: bot, raw: 'null' })).status).toBe(204)
  })
})

describe('who may', () => {
  test("only the lobby application's bot: another app's bot, a user, a bearer, nobody are refused", async () => {
    const { bot, player, lobby, message } = await world()
    const other = await makeApp()
    const body = { verdict: 'flagged' }
    const otherBot = await api('PUT', path(lobby.id, message.id), { token: `Bot ${other.bot_token}`, body })
    expect([otherBot.status, otherBot.body.code]).toEqual([404, 10031])
    const user = await api('PUT', path(lobby.id, message.id), { token: player.token, body })
    expect([user.status, user.body.code]).toEqual([403, 20002])
    expect((await api('PUT', path(lobby.id, message.id), { token: player.bearer, body })).status).toBe(401)
    expect((await api('PUT', path(lobby.id, message.id), { body })).status).toBe(401)
    // Unknown messages, and a message of another lobby of the same application.
    const second = await createLobby(bot)
    for (const [lobbyId, messageId] of [
      [lobby.id, '123456789012345678'],
      [lobby.id, 'not-a-snowflake'],
      [second.id, message.id],
    ]) {
      const r = await api('PUT', path(lobbyId, messageId), { token: bot, body })
      expect([messageId, r.status, r.body.code]).toEqual([messageId, 404, 10008])
    }
    // Nothing above changed the message.
    const [stored] = (await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body
    expect(stored.moderation_metadata).toBeUndefined()
    expect(stored.edited_timestamp).toBeUndefined()
  })
})

describe('what it changes', () => {
  test('GET .../messages (a page read before, from the cache) and LOBBY_MESSAGE_UPDATE on real sockets', async () => {
    const { app, bot, player, lobby, message } = await world()
    const other = await makeApp()
    const memberSocket = await socket(player.token)
    const bearerSocket = await socket(player.bearer)
    const botSocket = await socket(app.bot_token)
    const otherBot = await socket(other.bot_token)
    // The page is read (and cached) before the change.
    const before = (await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body
    expect(before[0].moderation_metadata).toBeUndefined()

    const r = await api('PUT', path(lobby.id, message.id), { token: bot, body: { verdict: 'toxic', score: '0.97' } })
    expect(r.status).toBe(204)
    expect(r.body).toBeNull()
    for (const s of [memberSocket, bearerSocket, botSocket]) {
      const update = (await s.waitFor('LOBBY_MESSAGE_UPDATE')).d
      expect(update).toMatchObject({
        id: message.id,
        lobby_id: lobby.id,
        channel_id: lobby.id,
        content: 'gg ez',
        author: { id: player.id },
        application_id: app.id,
        moderation_metadata: { verdict: 'toxic', score: '0.97' },
        timestamp: message.timestamp,
        tts: false,
        mentions: [],
      })
      expect(Date.parse(update.edited_timestamp)).toBeGreaterThanOrEqual(Date.parse(message.timestamp))
    }
    await otherBot.expectNo('LOBBY_MESSAGE_UPDATE')

    for (const token of [bot, player.bearer]) {
      const [after] = (await api('GET', `/lobbies/${lobby.id}/messages`, { token })).body
      expect(after.moderation_metadata).toEqual({ verdict: 'toxic', score: '0.97' })
      expect(after.edited_timestamp).toBeString()
    }
    // It replaces, never merges.
    await api('PUT', path(lobby.id, message.id), { token: bot, body: { verdict: 'ok' } })
    expect(
      (await memberSocket.waitFor((f) => f.t === 'LOBBY_MESSAGE_UPDATE' && f.d.moderation_metadata.verdict === 'ok')).d
        .moderation_metadata,
    ).toEqual({ verdict: 'ok' })
    const [replaced] = (await api('GET', `/lobbies/${lobby.id}/messages`, { token: bot })).body
    expect(replaced.moderation_metadata).toEqual({ verdict: 'ok' })
  })

  test("a linked channel's copy: MESSAGE_UPDATE with the moderation metadata to the channel's members", async () => {
    const { owner, channelId } = await makeGuild()
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const bearer = await bearerFor(owner, app)
    const lobby = await createLobby(bot, { members: [{ id: owner.id, flags: 1 }] })
    const linked = await api('PATCH', `/lobbies/${lobby.id}/channel-linking`, {
      token: bearer,
      body: { channel_id: channelId },
    })
    expect(linked.status).toBe(200)
    const ownerSocket = await socket(owner.token)
    const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bearer, body: { content: 'to both' } })
    expect(sent.status).toBe(201)
    const copy = (await ownerSocket.waitFor('MESSAGE_CREATE')).d
    expect(copy).toMatchObject({ channel_id: channelId, content: 'to both' })

    expect((await api('PUT', path(lobby.id, sent.body.id), { token: bot, body: { verdict: 'spam' } })).status).toBe(204)
    const lobbyUpdate = (await ownerSocket.waitFor('LOBBY_MESSAGE_UPDATE')).d
    expect(lobbyUpdate).toMatchObject({ id: sent.body.id, moderation_metadata: { verdict: 'spam' } })
    const channelUpdate = (await ownerSocket.waitFor('MESSAGE_UPDATE')).d
    expect(channelUpdate).toMatchObject({
      id: copy.id,
      channel_id: channelId,
      content: 'to both',
      moderation_metadata: { verdict: 'spam' },
    })
  })
})
