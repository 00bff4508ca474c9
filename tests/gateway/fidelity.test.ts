// What Discord clients expect of the Gateway beyond the handshake: which opcodes close 4001 and which are harmless,
// and Identify with a raw OAuth2 access token.
import { afterEach, describe, expect, test } from 'bun:test'
import { GatewayClient } from '../gateway-client'
import { makeApp, makeUser, resetWorld } from '../helpers'
import { bearerFor } from '../oauth2/helpers'

const open: GatewayClient[] = []
afterEach(() => {
  open.splice(0).forEach((c) => c.close())
  resetWorld()
})
async function identified(token: string) {
  const c = await GatewayClient.connect()
  open.push(c)
  const ready = await c.identify(token)
  return { c, ready }
}

describe('opcodes', () => {
  // Discord's client-sent opcodes we do not act on: a real client sends them and must not be disconnected.
  const harmless = [3, 4, 5, 8, 13, 14, 18, 19, 20, 21, 22, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 41, 42, 43]

  test('every opcode Discord defines for clients is accepted; the socket stays up and still answers', async () => {
    const user = await makeUser()
    const { c } = await identified(user.token)
    for (const op of harmless) c.send(op, op === 3 ? { status: 'online', since: null, activities: [], afk: false } : {})
    c.send(1, null)
    await c.waitFor((f) => f.op === 11 && c.frames.filter((x) => x.op === 11).length >= 1)
    await Bun.sleep(100)
    expect(c.closed).toBeNull()
  })

  for (const op of [0, 7, 9, 10, 11, 12, 15, 16, 23, 27, 44, 99, -1]) {
    test(`op ${op} (not a client opcode Discord defines) closes 4001`, async () => {
      const user = await makeUser()
      const { c } = await identified(user.token)
      c.send(op, {})
      expect((await c.waitForClose()).code).toBe(4001)
    })
  }

  test('the voice opcodes (17, and our 100 and 101) are handled, not refused', async () => {
    const user = await makeUser()
    const { c } = await identified(user.token)
    c.send(17, [])
    c.send(100, { lobby_id: '1', revision: 1, sdp: 'v=0' })
    c.send(101, { lobby_id: '1', candidate: null })
    await Bun.sleep(150)
    expect(c.closed).toBeNull()
  })
})

describe('Identify with an OAuth2 token', () => {
  test('a raw access token identifies like `Bearer <token>`', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const bearer = await bearerFor(user, app, 'identify gateway.connect lobbies.write')
    const raw = bearer.slice('Bearer '.length)
    const { ready } = await identified(raw)
    expect(ready.session_type).toBe('oauth')
    expect(ready.user.id).toBe(user.id)
    expect(ready.application.id).toBe(app.id)
  })

  test('the scope rule holds for raw tokens too: without gateway.connect, 4004', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const raw = (await bearerFor(user, app, 'identify lobbies.write')).slice('Bearer '.length)
    const c = await GatewayClient.connect()
    open.push(c)
    c.send(2, { token: raw, properties: {}, intents: 0 })
    expect((await c.waitForClose()).code).toBe(4004)
  })

  test('a raw access token resumes its session', async () => {
    const app = await makeApp()
    const user = await makeUser()
    const raw = (await bearerFor(user, app, 'identify gateway.connect')).slice('Bearer '.length)
    const { c, ready } = await identified(raw)
    const seq = c.lastSeq
    c.close(4000)
    await c.waitForClose()
    const again = await GatewayClient.connect()
    open.push(again)
    again.send(6, { token: raw, session_id: ready.session_id, seq })
    await again.waitFor('RESUMED')
  })
})
