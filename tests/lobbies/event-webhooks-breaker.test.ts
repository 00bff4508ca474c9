// Issue 40, finding 1: a failing endpoint is backed off without holding anyone else (a circuit breaker per URL
// origin), and an URL that failed every call for an hour is stopped, as Discord stops an application's event webhooks
// (status 3, "disabled by Discord"; a lobby's override is cleared); setting the URL again turns it back on. The test
// clock stands for the time that passes (retries and the breaker's waits are read from it).
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { config, setConfig } from '../../src/config'
import { clock } from '../../src/core/clock'
import { eventDeliveriesIdle, kickEventDeliveries } from '../../src/lobbies/event-webhooks'
import { countEventDeliveries, dropLobbyEventDeliveries } from '../../src/lobbies/event-deliveries-store'
import { setEventWebhooksUrl } from '../../src/oauth2/event-webhooks'
import { findApplication } from '../../src/oauth2/store'
import { api, resetWorld } from '../helpers'
import { createLobby as create } from './helpers'
import { hooked, newReceiver, stopReceivers, until } from './webhook-receiver'

afterAll(stopReceivers)

const FIELD = 'override_event_webhooks_url'

// What a test queued and left (a failed test) is dropped after it: each test counts the whole outbox. The lobbies
// live a week without members, so that the hours the test clock moves do not close them.
const made: string[] = []
async function createLobby(bot: string, body: Record<string, unknown> = {}) {
  const lobby = await create(bot, { idle_timeout_seconds: 604800, ...body })
  made.push(lobby.id)
  return lobby
}

/** Let `ms` pass on the test clock, then run the worker until it is idle. */
async function pass(ms: number) {
  clock.advance(ms)
  kickEventDeliveries()
  await eventDeliveriesIdle()
}

const post = (bot: string, lobbyId: string, content: string) =>
  api('POST', `/lobbies/${lobbyId}/messages`, { token: bot, body: { content } })

describe('with private addresses allowed (the receivers are on 127.0.0.1)', () => {
  beforeAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: true, eventWebhookTimeoutMs: 300 }))
  afterAll(() => setConfig({ ...config(), eventWebhooksAllowPrivate: false, eventWebhookTimeoutMs: 3000 }))
  afterEach(async () => {
    await eventDeliveriesIdle()
    for (const id of made.splice(0)) await dropLobbyEventDeliveries(id)
    resetWorld()
  })

  test('a failing endpoint is backed off (no call while open, then one probe), others are served meanwhile; order kept', async () => {
    const { app, bot, receiver: failing } = await hooked()
    const healthy = newReceiver()
    healthy.trust((await findApplication(app.id))!.verifyKey!)
    failing.answer(() => 500)
    const lobbies = []
    for (let i = 0; i < 6; i++) lobbies.push((await createLobby(bot)).id)
    const ordered: string[] = []
    for (const content of ['first', 'second', 'third']) ordered.push((await post(bot, lobbies[0], content)).body.id)
    for (const id of lobbies.slice(1)) await post(bot, id, 'hello')
    // The breaker opens at the third failure in a row: a call already out when it opened may still fail.
    await until(() => failing.events().length >= 3, 'three failures in a row')
    const afterFirstRound = failing.events().length
    expect(afterFirstRound).toBeLessThanOrEqual(6)

    // Their retries are due (1 s) but the endpoint is open (2 s): no call. Another endpoint is served meanwhile.
    const elsewhere = await createLobby(bot, { [FIELD]: healthy.url })
    await post(bot, elsewhere.id, 'elsewhere')
    await pass(1500)
    expect(failing.events()).toHaveLength(afterFirstRound)
    expect(healthy.events().map((c) => c.body.event.data.content)).toEqual(['elsewhere'])

    // The wait is over: one probe, which fails, and the endpoint is open again (4 s).
    await pass(1000)
    expect(failing.events()).toHaveLength(afterFirstRound + 1)
    await pass(1000)
    await pass(1000)
    expect(failing.events()).toHaveLength(afterFirstRound + 1)

    // The endpoint recovers: the next probe is taken, the breaker closes, and every event is delivered once, in order
    // per lobby.
    failing.answer(() => 204)
    const recovered = failing.calls.length
    await pass(2000)
    await until(async () => (await countEventDeliveries()) === 0, 'an empty outbox', { advanceMs: 1000 })
    const taken = failing.calls.slice(recovered).filter((c) => c.body.type === 1)
    expect(taken.map((c) => c.body.event.data.id).filter((id) => ordered.includes(id))).toEqual(ordered)
    expect(new Set(taken.map((c) => c.body.event.data.id)).size).toBe(taken.length)
    expect(taken).toHaveLength(3 + 5)
  })

  test("the application's URL failing every call for an hour is turned off (status 3); setting it again turns it on", async () => {
    const { app, bot, receiver: r } = await hooked()
    r.answer(() => 500)
    const [one, two] = [(await createLobby(bot)).id, (await createLobby(bot)).id]
    await post(bot, one, 'never taken')
    await post(bot, two, 'nor this')
    await until(() => r.events().length >= 2, 'the first failures')
    // 55 minutes of failures: still on, still retried.
    for (let m = 0; m < 55; m += 5) await pass(5 * 60_000)
    expect((await findApplication(app.id))!.eventWebhooksStatus).toBe(2)
    expect(await countEventDeliveries()).toBe(2)
    // Past the hour: turned off, as Discord shows it, and what was queued is dropped.
    await pass(5 * 60_000)
    await pass(5 * 60_000)
    expect((await findApplication(app.id))!.eventWebhooksStatus).toBe(3)
    const shown = await api('GET', '/applications/@me', { token: bot })
    expect(shown.body).toMatchObject({ event_webhooks_url: r.url, event_webhooks_status: 3, event_webhooks_types: [] })
    await until(async () => (await countEventDeliveries()) === 0, 'the queued events dropped')
    // Off: a new message queues nothing and calls nothing.
    r.answer(() => 204)
    const calls = r.calls.length
    await post(bot, one, 'while off')
    expect(await countEventDeliveries()).toBe(0)
    await pass(60_000)
    expect(r.calls).toHaveLength(calls)
    // Set again (PINGed): on, and the next event arrives.
    await setEventWebhooksUrl(app.id, r.url)
    expect((await findApplication(app.id))!.eventWebhooksStatus).toBe(2)
    await post(bot, one, 'back')
    await until(() => r.events().some((c) => c.body.event.data.content === 'back'), 'the event after turning it on')
  })

  test('one event refused for an hour while the URL takes the others stops nothing: it is retried on', async () => {
    const { app, bot, receiver: r } = await hooked()
    r.answer((call) => (call.body.event?.data?.content === 'refused' ? 400 : 204))
    const [stuck, busy] = [(await createLobby(bot)).id, (await createLobby(bot)).id]
    await post(bot, stuck, 'refused')
    await until(() => r.events().length >= 1, 'the first refusal')
    for (let m = 0; m < 70; m += 5) {
      await post(bot, busy, `at ${m}`)
      await pass(5 * 60_000)
    }
    expect((await findApplication(app.id))!.eventWebhooksStatus).toBe(2)
    expect(await countEventDeliveries()).toBe(1)
    expect(r.events().filter((c) => c.body.event.data.lobby_id === busy)).toHaveLength(14)
  })

  test("a lobby's override failing every call for an hour is cleared: its events go to the application's URL again", async () => {
    const { app, bot, receiver: appUrl } = await hooked()
    const own = newReceiver()
    own.trust((await findApplication(app.id))!.verifyKey!)
    const lobby = await createLobby(bot, { [FIELD]: own.url })
    own.answer(() => 500)
    await post(bot, lobby.id, 'stuck')
    await post(bot, lobby.id, 'behind it')
    await until(() => own.events().length >= 1, 'the first failure')
    for (let m = 0; m < 55; m += 5) await pass(5 * 60_000)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body[FIELD]).toBe(own.url)
    await pass(5 * 60_000)
    await pass(5 * 60_000)
    expect((await api('GET', `/lobbies/${lobby.id}`, { token: bot })).body).not.toHaveProperty(FIELD)
    expect(await countEventDeliveries()).toBe(0)
    // Only the head was ever tried there; the application's URL got nothing of it.
    expect(new Set(own.events().map((c) => c.body.event.data.content))).toEqual(new Set(['stuck']))
    expect(appUrl.events()).toHaveLength(0)
    await post(bot, lobby.id, 'after')
    await until(() => appUrl.events().length === 1, 'the next event at the application URL')
    expect(appUrl.events()[0].body.event.data).toMatchObject({ lobby_id: lobby.id, content: 'after' })
    // The application is untouched.
    expect((await findApplication(app.id))!.eventWebhooksStatus).toBe(2)
  })
})
