// The sockets' paths with and without a trailing slash (security issue 40, finding 5): Discord's Gateway answers at
// `/?v=10`, and Oceanic and Eris append `/` to GET /gateway/bot's URL, so `/gateway/?v=10` is the Gateway, as
// `/remote-auth/?v=2` is the remote-auth socket. Only that one slash: `/gateway//`, `/gateway/x` and `/gatewayx` are
// what any unknown path is (the libraries themselves: tests/libraries/oceanic.test.ts and eris.test.ts).
import { afterEach, describe, expect, test } from 'bun:test'
import { DesktopClient } from '../remote-auth/desktop-client'
import { events, topics } from '../../src/gateway/bus'
import { tracked } from '../gateway-client'
import { api, makeApp, makeUser, resetWorld, server } from '../helpers'

const sockets = tracked()
const desktops: DesktopClient[] = []
afterEach(() => {
  sockets.closeAll()
  for (const d of desktops.splice(0)) d.ws.close()
  resetWorld()
})

/** Whether a WebSocket opens on `path` (with `query`): the upgrade's answer, as a client sees it. */
async function opens(path: string, query: string): Promise<boolean> {
  const { port } = await server()
  const ws = new WebSocket(`ws://127.0.0.1:${port}${path}${query}`)
  const opened = await new Promise<boolean>((resolve) => {
    ws.onopen = () => resolve(true)
    ws.onerror = () => resolve(false)
  })
  ws.close()
  return opened
}

/** What a plain GET of `path` answers (status and body), as a client without an upgrade sees it. */
async function plainGet(path: string, headers: Record<string, string> = {}) {
  const { url } = await server()
  const r = await fetch(`${url}${path}`, { headers })
  return { status: r.status, body: await r.text() }
}

describe('the Gateway at /gateway/', () => {
  test('a bot gets Hello and READY at /gateway/?v=10, where Oceanic and Eris connect', async () => {
    const app = await makeApp()
    const c = await sockets.connect({ query: '/?v=10&encoding=json' })
    expect(c.hello).toMatchObject({ op: 10, s: null, t: null })
    const ready = await c.identify(`Bot ${app.bot_token}`)
    expect(ready.application.id).toBe(app.id)
    expect(ready.private_channels).toEqual([])
  })

  test('a Resume at /gateway/ of a session identified at /gateway (and the reverse) replays what it missed', async () => {
    const user = await makeUser()
    for (const [first, then] of [
      ['?v=10', '/?v=10'],
      ['/?v=10', '?v=10'],
    ]) {
      const c = await sockets.connect({ query: first })
      const ready = await c.identify(user.token)
      const seq = c.lastSeq!
      c.close(4000)
      await c.waitForClose()
      events.publish(topics.account(user.id), 'MISSED', { first })
      const r = await sockets.connect({ query: then })
      r.send(6, { token: user.token, session_id: ready.session_id, seq })
      await r.waitFor('RESUMED')
      expect(r.dispatches('MISSED').map((f) => f.d.first)).toEqual([first])
    }
  })

  test('only that slash: /gateway//, /gateway/x, /gateway/.. and /gatewayx open no socket', async () => {
    expect(await opens('/gateway', '?v=10')).toBe(true)
    expect(await opens('/gateway/', '?v=10')).toBe(true)
    for (const path of ['/gateway//', '/gateway/x', '/gateway/gateway', '/gateway/..', '/gatewayx', '/gateway%2f'])
      expect({ path, opened: await opens(path, '?v=10') }).toEqual({ path, opened: false })
  })

  test('a plain GET: 400 at /gateway/ as at /gateway; longer paths answer as an unknown path does', async () => {
    const notUpgraded = await plainGet('/gateway?v=10')
    expect(notUpgraded.status).toBe(400)
    expect(await plainGet('/gateway/?v=10')).toEqual(notUpgraded)
    for (const accept of [{}, { accept: 'text/html' }] as Record<string, string>[]) {
      const unknown = await plainGet('/gatewayx', accept)
      expect(unknown.status).toBe(404)
      for (const path of ['/gateway//', '/gateway/x', '/gateway/bot'])
        expect({ path, ...(await plainGet(path, accept)) }).toEqual({ path, ...unknown })
    }
    // A method the upgrade does not take answers as an unknown path too.
    const { url } = await server()
    expect((await fetch(`${url}/gateway/`, { method: 'POST' })).status).toBe(404)
  })

  test('GET /api/v10/gateway/ and /gateway/bot/ answer as without the slash; /gateway// is a 404', async () => {
    const app = await makeApp()
    const bot = `Bot ${app.bot_token}`
    const plain = await api('GET', '/api/v10/gateway')
    expect(plain.status).toBe(200)
    expect((await api('GET', '/api/v10/gateway/')).body).toEqual(plain.body)
    const forBot = await api('GET', '/api/v10/gateway/bot', { token: bot })
    expect(forBot.status).toBe(200)
    expect((await api('GET', '/api/v10/gateway/bot/', { token: bot })).body).toEqual(forBot.body)
    expect((await api('GET', '/api/v10/gateway/bot/')).status).toBe(401)
    for (const path of ['/api/v10/gateway//', '/api/v10/gateway/bot//', '/api/v10/gatewayx'])
      expect({ path, status: (await api('GET', path, { token: bot })).status }).toEqual({ path, status: 404 })
  })
})

describe('the remote-auth socket at /remote-auth/', () => {
  test('the whole handshake at /remote-auth/?v=2 (pending_remote_init)', async () => {
    const desktop = await DesktopClient.ready('nonce', { query: '/?v=2' })
    desktops.push(desktop)
    expect(desktop.frames.find((f) => f.op === 'pending_remote_init')?.fingerprint).toBe(desktop.fingerprint)
  })

  test('only that slash: /remote-auth//, /remote-auth/x and /remote-authx open no socket', async () => {
    for (const path of ['/remote-auth//', '/remote-auth/x', '/remote-authx'])
      expect({ path, opened: await opens(path, '?v=2') }).toEqual({ path, opened: false })
  })
})
