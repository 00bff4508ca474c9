// A lobby's own event webhooks URL (`override_event_webhooks_url` of POST and PATCH /lobbies, WIRE.md §1): checked as
// the application's URL is (http(s), at most 2048 characters, a public address unless EVENT_WEBHOOKS_ALLOW_PRIVATE,
// a signed PING answered 2xx before anything is written); the lobby's events then go there, signed with the
// application's key, whether or not the application has a URL of its own; clearing it goes back to the application's
// URL (or nothing). Queued events go where the lobby's events go when they are sent: a change takes them along.
// Receivers are real servers that verify every signature with crypto.subtle (webhook-receiver.ts).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { countLobbies } from '../../src/lobbies/store'
import { countEventDeliveries } from '../../src/lobbies/event-deliveries-store'
import { gatewayView } from '../../src/lobbies/snapshots'
import { findApplication } from '../../src/oauth2/store'
import { schemaErrors } from '../core/docs-schema-check'
import { api, makeApp, resetWorld, server } from '../helpers'
import { createLobby, setup } from './helpers'
import { hooked, newReceiver, stopReceivers, until } from './webhook-receiver'

afterAll(stopReceivers)

const FIELD = 'override_event_webhooks_url'

/** A receiver that trusts the application's key. */
async function receiverFor(applicationId: string) {
  const r = newReceiver()
  r.trust((await findApplication(applicationId))!.verifyKey!)
  return r
}

const say = (lobbyId: string, bearer: string, content: string) =>
  api('POST', `/lobbies/${lobbyId}/messages`, { token: bearer, body: { content } })

/** The form error at the override field: its code. */
function refusedAt(r: { status: number; body: any }, code?: string) {
  expect(r.status).toBe(400)
  expect(r.body.code).toBe(50035)
  const errors = r.body.errors[FIELD]._errors
  expect(errors).toHaveLength(1)
  if (code) expect(errors[0].code).toBe(code)
}

describe('with private addresses allowed (the receivers are on 127.0.0.1)', () => {
  beforeAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: true, eventWebhookTimeoutMs: 300 }))
  afterAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: false, eventWebhookTimeoutMs: 3000 }))
  afterEach(resetWorld)

  test('POST with an override: PINGed first, shown to the Bot, and the lobby events go there although the app has no URL', async () => {
    const { app, bot, players } = await setup(1)
    expect((await findApplication(app.id))!.eventWebhooksUrl).toBeNull()
    const r = await receiverFor(app.id)
    const created = await api('POST', '/lobbies', {
      token: bot,
      body: { members: [{ id: players[0].id }], [FIELD]: r.url },
    })
    expect(created.status).toBe(201)
    expect(created.body[FIELD]).toBe(r.url)
    // The PING came before: signed with the application's key, Discord's PING body.
    expect(r.calls).toHaveLength(1)
    expect(r.calls[0]).toMatchObject({ verified: true, body: { version: 1, application_id: app.id, type: 0 } })
    const lobbyId = created.body.id
    // The Bot sees it on every read; the lobby's players (Bearer) and the Gateway objects do not.
    for (let i = 0; i < 3; i++)
      expect((await api('GET', `/lobbies/${lobbyId}`, { token: bot })).body[FIELD]).toBe(r.url)
    const asPlayer = await api('GET', `/lobbies/${lobbyId}`, { token: players[0].bearer })
    expect(asPlayer.status).toBe(200)
    expect(asPlayer.body[FIELD]).toBeUndefined()
    expect(await gatewayView(lobbyId)).not.toHaveProperty(FIELD)

    const sent = await say(lobbyId, players[0].bearer, 'to the override')
    await until(() => r.events().length === 1, 'the event at the override')
    expect(r.events()[0].body).toEqual({
      version: 1,
      application_id: app.id,
      type: 1,
      event: {
        type: 'LOBBY_MESSAGE_CREATE',
        timestamp: expect.any(String),
        data: expect.objectContaining({ id: sent.body.id, content: 'to the override', lobby_id: lobbyId }),
      },
    })
    await until(async () => (await countEventDeliveries()) === 0, 'an empty outbox')
  })

  test("the application's URL keeps the other lobbies; clearing the override goes back to it", async () => {
    const { app, bot, players, receiver: appUrl } = await hooked()
    const own = await receiverFor(app.id)
    const special = await createLobby(bot, { members: [{ id: players[0].id }], [FIELD]: own.url })
    const plain = await createLobby(bot, { members: [{ id: players[0].id }] })
    expect(plain).not.toHaveProperty(FIELD)
    await say(special.id, players[0].bearer, 's1')
    await say(plain.id, players[0].bearer, 'p1')
    await until(() => own.events().length === 1 && appUrl.events().length === 1, 'one event each')
    expect(own.events()[0].body.event.data.lobby_id).toBe(special.id)
    expect(appUrl.events()[0].body.event.data.lobby_id).toBe(plain.id)

    // Cleared (null): the answer no longer shows it, and the lobby's next event goes to the application's URL.
    const cleared = await api('PATCH', `/lobbies/${special.id}`, { token: bot, body: { [FIELD]: null } })
    expect(cleared.status).toBe(200)
    expect(cleared.body).not.toHaveProperty(FIELD)
    expect((await api('GET', `/lobbies/${special.id}`, { token: bot })).body).not.toHaveProperty(FIELD)
    await say(special.id, players[0].bearer, 's2')
    await until(() => appUrl.events().length === 2, 'the cleared lobby at the application URL')
    expect(appUrl.events()[1].body.event.data).toMatchObject({ lobby_id: special.id, content: 's2' })
    expect(own.events()).toHaveLength(1)
    await until(async () => (await countEventDeliveries()) === 0, 'an empty outbox')
  })

  test('an application without a URL: a cleared override sends nothing, and what it had queued is dropped', async () => {
    const { app, bot, players } = await setup(1)
    const r = await receiverFor(app.id)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }], [FIELD]: r.url })
    r.answer(() => 500)
    await say(lobby.id, players[0].bearer, 'stuck')
    await until(() => r.events().length >= 1, 'a failed attempt')
    expect(await countEventDeliveries()).toBe(1)
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { [FIELD]: null } })).status).toBe(200)
    await until(async () => (await countEventDeliveries()) === 0, 'the queued event dropped')
    r.answer(() => 204)
    const before = r.calls.length
    await say(lobby.id, players[0].bearer, 'nowhere')
    expect(await countEventDeliveries()).toBe(0) // nothing was queued
    await Bun.sleep(50)
    expect(r.calls.length).toBe(before)
  })

  test('queued events follow a change of the override: due at once, in order, at the new URL', async () => {
    const { app, bot, players } = await setup(1)
    const old = await receiverFor(app.id)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }], [FIELD]: old.url })
    old.answer((call) => (call.body.type === 0 ? 204 : 503))
    const ids: string[] = []
    for (const content of ['a', 'b', 'c']) ids.push((await say(lobby.id, players[0].bearer, content)).body.id)
    await until(() => old.events().length >= 1, 'the old URL failing')
    const next = await receiverFor(app.id)
    const moved = await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { [FIELD]: next.url } })
    expect(moved.status).toBe(200)
    expect(moved.body[FIELD]).toBe(next.url)
    expect(next.calls[0].body.type).toBe(0) // PINGed before it was taken
    // No clock move: the change made them due now (the old URL's backoff does not hold them).
    await until(async () => (await countEventDeliveries()) === 0, 'the queued events at the new URL')
    expect(next.events().map((c) => c.body.event.data.id)).toEqual(ids)
    expect(old.events().every((c) => c.body.event.data.id === ids[0])).toBe(true)
    // The same URL again is not PINGed again (it is the lobby's already); nothing else changes.
    const pings = next.calls.filter((c) => c.body.type === 0).length
    expect((await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { [FIELD]: next.url } })).status).toBe(200)
    expect(next.calls.filter((c) => c.body.type === 0).length).toBe(pings)
  })

  test('a URL that does not answer the PING (error, bad signature, timeout) is refused and nothing is written', async () => {
    const { app, bot } = await setup(0)
    const r = await receiverFor(app.id)
    const lobbies = await countLobbies()
    r.answer(() => 500)
    refusedAt(await api('POST', '/lobbies', { token: bot, body: { [FIELD]: r.url } }), 'BASE_TYPE_INVALID')
    expect(await countLobbies()).toBe(lobbies)
    const lobby = await createLobby(bot, { metadata: { v: '1' } })
    // Checked with another application's key: the receiver answers 401.
    r.trust((await findApplication((await makeApp()).id))!.verifyKey!)
    r.answer(() => 204)
    refusedAt(
      await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { metadata: { v: '2' }, [FIELD]: r.url } }),
    )
    r.trust((await findApplication(app.id))!.verifyKey!)
    r.answer(() => Bun.sleep(1000).then(() => 204))
    refusedAt(await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { [FIELD]: `${r.url}?slow` } }))
    const after = await api('GET', `/lobbies/${lobby.id}`, { token: bot })
    expect(after.body.metadata).toEqual({ v: '1' })
    expect(after.body).not.toHaveProperty(FIELD)
    expect(r.calls.every((c) => c.body.type === 0)).toBe(true)
  })

  test('the API document names the field: the request bodies take it, the answers that carry it match their schema', async () => {
    const { url } = await server()
    const paths = ((await (await fetch(`${url}/api/docs/json`)).json()) as { paths: Record<string, any> }).paths
    const { app, bot, players } = await setup(1)
    const r = await receiverFor(app.id)
    const body = { [FIELD]: r.url }
    const schemaOf = (path: string, method: string, status: string) =>
      paths[path][method].responses[status].content['application/json'].schema
    for (const method of ['post', 'patch']) {
      const path = method === 'post' ? '/api/v9/lobbies' : '/api/v9/lobbies/{lobbyId}'
      const request = paths[path][method].requestBody.content['application/json'].schema
      expect(schemaErrors(request, body)).toEqual([])
      expect(schemaErrors(request, { [FIELD]: null })).toEqual([])
      expect(schemaErrors(request, { [FIELD]: 'x'.repeat(2049) })).not.toEqual([])
    }
    const created = await api('POST', '/lobbies', { token: bot, body: { ...body, members: [{ id: players[0].id }] } })
    expect(schemaErrors(schemaOf('/api/v9/lobbies', 'post', '201'), created.body)).toEqual([])
    const patched = await api('PATCH', `/lobbies/${created.body.id}`, { token: bot, body })
    expect(schemaErrors(schemaOf('/api/v9/lobbies/{lobbyId}', 'patch', '200'), patched.body)).toEqual([])
    const read = await api('GET', `/lobbies/${created.body.id}`, { token: bot })
    expect(read.body[FIELD]).toBe(r.url)
    expect(schemaErrors(schemaOf('/api/v9/lobbies/{lobbyId}', 'get', '200'), read.body)).toEqual([])
  })

  test('limits at the edge: 2048 characters pass, 2049 fail; not a URL, not http(s), not a string: 400 50035 there', async () => {
    const { app, bot } = await setup(0)
    const r = await receiverFor(app.id)
    const sized = (n: number) => `${r.url}?pad=${'x'.repeat(n - r.url.length - 5)}`
    expect(sized(2048)).toHaveLength(2048)
    const atLimit = await api('POST', '/lobbies', { token: bot, body: { [FIELD]: sized(2048) } })
    expect(atLimit.status).toBe(201)
    expect(atLimit.body[FIELD]).toBe(sized(2048))
    const lobby = atLimit.body.id
    const lobbies = await countLobbies()
    const pings = r.calls.length
    for (const [value, code] of [
      [sized(2049), 'BASE_TYPE_MAX_LENGTH'],
      ['not a url', 'URL_TYPE_INVALID_URL'],
      ['', 'URL_TYPE_INVALID_URL'],
      ['ftp://example.com/events', 'URL_TYPE_INVALID_SCHEME'],
      ['http://user:secret@example.com/events', 'BASE_TYPE_INVALID'],
      [42, 'BASE_TYPE_STRING'],
      [{ url: r.url }, 'BASE_TYPE_STRING'],
    ] as const) {
      refusedAt(await api('POST', '/lobbies', { token: bot, body: { [FIELD]: value } }), code)
      refusedAt(await api('PATCH', `/lobbies/${lobby}`, { token: bot, body: { [FIELD]: value } }), code)
    }
    expect(await countLobbies()).toBe(lobbies)
    expect(r.calls.length).toBe(pings) // refused on their form: nothing was called
    const patched = await api('PATCH', `/lobbies/${lobby}`, { token: bot, body: { [FIELD]: sized(2047) } })
    expect(patched.status).toBe(200)
    expect(patched.body[FIELD]).toBe(sized(2047))
    // With other form errors, all are reported together.
    const both = await api('POST', '/lobbies', { token: bot, body: { idle_timeout_seconds: 1, [FIELD]: 'nope' } })
    expect(Object.keys(both.body.errors).sort()).toEqual(['idle_timeout_seconds', FIELD])
  })

  test("who may: another application's bot 404 10031, a user token 403 20002, a Bearer 401; none PINGs", async () => {
    const { app, bot, players } = await setup(1)
    const r = await receiverFor(app.id)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const other = await makeApp()
    const foreign = await api('PATCH', `/lobbies/${lobby.id}`, {
      token: `Bot ${other.bot_token}`,
      body: { [FIELD]: r.url },
    })
    expect(foreign.status).toBe(404)
    expect(foreign.body.code).toBe(10031)
    const user = players[0].token
    const post = await api('POST', '/lobbies', { token: user, body: { [FIELD]: r.url } })
    expect([post.status, post.body.code]).toEqual([403, 20002])
    const patch = await api('PATCH', `/lobbies/${lobby.id}`, { token: user, body: { [FIELD]: r.url } })
    expect([patch.status, patch.body.code]).toEqual([403, 20002])
    expect((await api('POST', '/lobbies', { token: players[0].bearer, body: { [FIELD]: r.url } })).status).toBe(401)
    expect(
      (await api('PATCH', `/lobbies/${lobby.id}`, { token: players[0].bearer, body: { [FIELD]: r.url } })).status,
    ).toBe(401)
    expect(r.calls).toEqual([])
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body).not.toHaveProperty(FIELD)
  })
})

test('the SSRF guard: loopback, private and link-local overrides are refused as the application URL is, without a call', async () => {
  expect(config().eventWebhooksAllowPrivate).toBe(false)
  const { app, bot } = await setup(0)
  const r = await receiverFor(app.id)
  const lobby = await createLobby(bot)
  const lobbies = await countLobbies()
  for (const url of [
    r.url,
    'http://localhost:9/x',
    'http://10.1.2.3/x',
    'http://192.168.0.10/x',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:9/x',
    'http://[::ffff:127.0.0.1]:9/x',
  ]) {
    refusedAt(await api('POST', '/lobbies', { token: bot, body: { [FIELD]: url } }), 'BASE_TYPE_INVALID')
    refusedAt(await api('PATCH', `/lobbies/${lobby.id}`, { token: bot, body: { [FIELD]: url } }), 'BASE_TYPE_INVALID')
  }
  expect(r.calls).toEqual([])
  expect(await countLobbies()).toBe(lobbies)
  expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body).not.toHaveProperty(FIELD)
})
