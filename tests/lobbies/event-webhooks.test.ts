// Issue 28: application event webhooks. A real receiver (Bun.serve) checks every call's X-Signature-Ed25519 with
// crypto.subtle against the application's verify_key, as a game's server would. A URL is taken only after it
// acknowledged a signed PING; the SSRF guard refuses non-public addresses unless EVENT_WEBHOOKS_ALLOW_PRIVATE;
// LOBBY_MESSAGE_CREATE and LOBBY_MESSAGE_UPDATE arrive at least once, in order per lobby, with retries; a deleted
// lobby's undelivered events are dropped; an event queued before a kill -9 is delivered after the restart.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { eventDeliveriesIdle, kickEventDeliveries } from '../../src/lobbies/event-webhooks'
import { countEventDeliveries } from '../../src/lobbies/event-deliveries-store'
import { setEventWebhooksUrl } from '../../src/oauth2/event-webhooks'
import { findApplication } from '../../src/oauth2/store'
import { api, makeApp, resetWorld } from '../helpers'
import { cli, freshEnv, serve } from '../ops/process-helpers'
import { createLobby } from './helpers'
import { hooked, newReceiver, stopReceivers, until } from './webhook-receiver'

afterAll(stopReceivers)

describe('with private addresses allowed (the receiver is on 127.0.0.1)', () => {
  beforeAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: true, eventWebhookTimeoutMs: 300 }))
  afterAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: false, eventWebhookTimeoutMs: 3000 }))
  afterEach(resetWorld)

  test('PING first: a URL that does not acknowledge it (or answers a bad signature) is refused and nothing changes', async () => {
    const app = await makeApp()
    const r = newReceiver()
    r.trust((await findApplication(app.id))!.verifyKey!)
    r.answer(() => 500)
    await expect(setEventWebhooksUrl(app.id, r.url)).rejects.toMatchObject({ code: 50035 })
    expect(await findApplication(app.id)).toMatchObject({ eventWebhooksUrl: null, eventWebhooksStatus: 1 })
    // The PING: signed, {version: 1, application_id, type: 0}.
    expect(r.calls[0]).toMatchObject({ verified: true, body: { version: 1, application_id: app.id, type: 0 } })
    // A receiver that checks against another key refuses the PING (401): refused here too.
    r.trust((await findApplication((await makeApp()).id))!.verifyKey!)
    r.answer(() => 204)
    await expect(setEventWebhooksUrl(app.id, r.url)).rejects.toMatchObject({ code: 50035 })
    r.trust((await findApplication(app.id))!.verifyKey!)
    await setEventWebhooksUrl(app.id, r.url)
    expect(await findApplication(app.id)).toMatchObject({ eventWebhooksUrl: r.url, eventWebhooksStatus: 2 })
    const shown = await api('GET', '/applications/@me', { token: `Bot ${app.bot_token}` })
    expect(shown.body).toMatchObject({ event_webhooks_url: r.url, event_webhooks_status: 2 })
    // A timeout is a failure.
    r.answer(() => Bun.sleep(1000).then(() => 204))
    await expect(setEventWebhooksUrl(app.id, `${r.url}?slow`)).rejects.toMatchObject({ code: 50035 })
    expect((await findApplication(app.id))!.eventWebhooksUrl).toBe(r.url)
    await setEventWebhooksUrl(app.id, null)
    expect(await findApplication(app.id)).toMatchObject({ eventWebhooksUrl: null, eventWebhooksStatus: 1 })
  })

  test('LOBBY_MESSAGE_CREATE and LOBBY_MESSAGE_UPDATE, signed, in order, in the envelope Discord sends', async () => {
    const { app, bot, players, receiver: r } = await hooked()
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const ids: string[] = []
    for (const content of ['one', 'two', 'three']) {
      const sent = await api('POST', `/lobbies/${lobby.id}/messages`, { token: players[0].bearer, body: { content } })
      ids.push(sent.body.id)
    }
    await api('PUT', `/lobbies/${lobby.id}/messages/${ids[0]}/moderation-metadata`, {
      token: bot,
      body: { verdict: 'ok' },
    })
    await until(() => r.events().length === 4, 'four events')
    expect(r.calls.every((c) => c.verified)).toBe(true)
    const [first, , third, update] = r.events().map((c) => c.body)
    expect(first).toEqual({
      version: 1,
      application_id: app.id,
      type: 1,
      event: {
        type: 'LOBBY_MESSAGE_CREATE',
        timestamp: expect.any(String),
        data: expect.objectContaining({ id: ids[0], content: 'one', lobby_id: lobby.id, author: expect.any(Object) }),
      },
    })
    expect(r.events().map((c) => [c.body.event.type, c.body.event.data.id])).toEqual([
      ['LOBBY_MESSAGE_CREATE', ids[0]],
      ['LOBBY_MESSAGE_CREATE', ids[1]],
      ['LOBBY_MESSAGE_CREATE', ids[2]],
      ['LOBBY_MESSAGE_UPDATE', ids[0]],
    ])
    expect(third.event.data.content).toBe('three')
    expect(update.event.data).toMatchObject({
      moderation_metadata: { verdict: 'ok' },
      edited_timestamp: expect.any(String),
    })
    // The receiver has the bodies before the server has read its 2xx and emptied the outbox row.
    await until(async () => (await countEventDeliveries()) === 0, 'an empty outbox')
  })

  test('failures are retried with backoff, and a lobby waits for its oldest event: delivered once each, in order', async () => {
    const { bot, players, receiver: r } = await hooked()
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    // The first three calls fail (500, then a timeout, then 503); then all are taken.
    r.answer((_, i) => (i === 1 ? 500 : i === 2 ? Bun.sleep(600).then(() => 204) : i === 3 ? 503 : 204))
    const ids: string[] = []
    for (const content of ['a', 'b', 'c'])
      ids.push(
        (await api('POST', `/lobbies/${lobby.id}/messages`, { token: players[0].bearer, body: { content } })).body.id,
      )
    await until(() => r.events().filter((c) => c.body.event.data.id === ids[2]).length > 0, 'the last one', {
      advanceMs: 5_000,
    })
    await until(async () => (await countEventDeliveries()) === 0, 'an empty outbox')
    const delivered = r.calls.filter((c, i) => c.body.type === 1 && ![1, 2, 3].includes(i))
    expect(delivered.map((c) => c.body.event.data.id)).toEqual(ids)
    // Before the first was taken, no later one was tried.
    const firstTaken = r.calls.findIndex((c, i) => i > 3 && c.body.type === 1)
    expect(r.calls.slice(1, firstTaken).every((c) => c.body.event.data.id === ids[0])).toBe(true)
  })

  test("a deleted lobby's undelivered events are dropped, never sent", async () => {
    const { bot, players, receiver: r } = await hooked()
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    r.answer(() => 500)
    await api('POST', `/lobbies/${lobby.id}/messages`, { token: players[0].bearer, body: { content: 'doomed' } })
    await until(() => r.events().length >= 1, 'a failed attempt')
    expect(await countEventDeliveries()).toBeGreaterThan(0)
    expect((await api('DELETE', `/lobbies/${lobby.id}`, { token: bot })).status).toBe(204)
    r.answer(() => 204)
    const before = r.calls.length
    clock.advance(120_000)
    kickEventDeliveries()
    await eventDeliveriesIdle()
    await Bun.sleep(50)
    expect(r.calls.length).toBe(before)
  })
})

test('the SSRF guard: loopback, private, link-local and non-http URLs are refused without a call', async () => {
  const app = await makeApp()
  const r = newReceiver()
  for (const url of [
    r.url,
    'http://localhost:9/x',
    'http://10.1.2.3/x',
    'http://192.168.0.10/x',
    'http://169.254.169.254/latest/meta-data',
    'http://[::1]:9/x',
    'http://[::ffff:127.0.0.1]:9/x',
    'ftp://example.com/x',
    'not a url',
  ])
    await expect(setEventWebhooksUrl(app.id, url)).rejects.toMatchObject({ status: 400, code: 50035 })
  expect(r.calls).toEqual([])
  expect((await findApplication(app.id))!.eventWebhooksUrl).toBeNull()
})

test('an event queued before a kill -9 is delivered after the restart (the outbox is in the database)', async () => {
  const r = newReceiver()
  const { env } = freshEnv({ EVENT_WEBHOOKS_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'warn' })
  const created = JSON.parse((await cli(env, ['app', 'create', '--name', 'Durable'])).stdout)
  const key = JSON.parse((await cli(env, ['app', 'list'])).stdout)[0].verify_key
  r.trust(key)
  const set = await cli(env, ['app', 'set', '--id', created.id, '--event-webhook-url', r.url])
  expect(JSON.parse(set.stdout)).toMatchObject({ event_webhooks_url: r.url, event_webhooks_status: 2 })
  // The receiver is down (every call fails) while the server takes the message; then the server is killed.
  r.answer(() => 503)
  const first = await serve(env)
  const bot = `Bot ${created.bot_token}`
  const lobby = (await (
    await fetch(`${first.url}/api/v10/lobbies`, {
      method: 'POST',
      headers: { authorization: bot, 'content-type': 'application/json' },
      body: '{}',
    })
  ).json()) as { id: string }
  const sent = await fetch(`${first.url}/api/v10/lobbies/${lobby.id}/messages`, {
    method: 'POST',
    headers: { authorization: bot, 'content-type': 'application/json' },
    body: '{"content":"survives"}',
  })
  expect(sent.status).toBe(201)
  const message = (await sent.json()) as { id: string }
  for (let i = 0; i < 100 && r.events().length === 0; i++) await Bun.sleep(20)
  first.proc.kill('SIGKILL')
  await first.proc.exited
  // Up again, with the receiver taking calls: the message arrives.
  r.answer(() => 204)
  const before = r.calls.length
  const second = await serve(env)
  try {
    for (let i = 0; i < 250 && !r.calls.slice(before).some((c) => c.body.event?.data?.id === message.id); i++)
      await Bun.sleep(20)
  } finally {
    await second.stop()
  }
  const taken = r.calls.filter((c) => c.body.event?.data?.id === message.id && c.verified)
  expect(taken.length).toBeGreaterThanOrEqual(2) // refused before the kill, taken after it
  expect(taken.at(-1)!.body.event).toMatchObject({ type: 'LOBBY_MESSAGE_CREATE', data: { content: 'survives' } })
}, 30_000)
