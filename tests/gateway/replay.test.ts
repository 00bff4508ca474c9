// The resume buffer is bounded in bytes (GATEWAY_REPLAY_BYTES): large lobby events push the oldest out, a Resume
// from before what it still holds gets op 9 false, one within it replays; /metrics-facing stats follow.
import { afterEach, describe, expect, test } from 'bun:test'
import { config } from '../../src/config'
import { events, topics } from '../../src/gateway/bus'
import { gatewayStats } from '../../src/gateway/server'
import { setReplayLimit } from '../../src/gateway/replay'
import { tracked } from '../gateway-client'
import { makeUser } from '../helpers'

const sockets = tracked()
afterEach(() => {
  sockets.closeAll()
  setReplayLimit(config().gatewayReplayBytes)
})

const KB = 1024

async function droppedSession() {
  const user = await makeUser()
  const c = await sockets.connect()
  const ready = await c.identify(user.token)
  events.publish(topics.account(user.id), 'SEEN', {})
  await c.waitFor('SEEN')
  const seq = c.lastSeq!
  c.close(4000)
  await c.waitForClose()
  return { user, sessionId: ready.session_id as string, seq }
}

describe('the resume buffer is bounded in bytes', () => {
  test('past the bound the oldest go: an old Resume gets op 9 false, the buffer stays under the bound', async () => {
    const { user, sessionId, seq } = await droppedSession()
    setReplayLimit(256 * KB)
    const big = 'x'.repeat(50 * KB)
    for (let i = 0; i < 12; i++) events.publish(topics.account(user.id), 'BIG', { i, big }) // ~600 KB
    expect(gatewayStats().replayBytes).toBeLessThanOrEqual(256 * KB)
    expect(gatewayStats().replayEntries).toBeLessThan(6)
    const r = await sockets.connect()
    r.send(6, { token: user.token, session_id: sessionId, seq })
    expect((await r.waitForOp(9)).d).toBe(false)
  })

  test('within the bound a Resume replays every missed event, large ones included', async () => {
    const { user, sessionId, seq } = await droppedSession()
    setReplayLimit(4 * 1024 * KB)
    const big = 'y'.repeat(100 * KB)
    for (let i = 0; i < 5; i++) events.publish(topics.account(user.id), 'BIG', { i, big })
    const r = await sockets.connect()
    r.send(6, { token: user.token, session_id: sessionId, seq })
    await r.waitFor('RESUMED')
    expect(r.dispatches('BIG').map((f) => f.d.i)).toEqual([0, 1, 2, 3, 4])
  })

  test('lowering the bound drops at once what no longer fits', () => {
    const before = gatewayStats().replayBytes
    setReplayLimit(64 * KB)
    expect(gatewayStats().replayBytes).toBeLessThanOrEqual(Math.min(before, 64 * KB))
  })
})

describe('a lobby snapshot is made once per change', () => {
  test('Lazy computes and serializes on the first publish; every later one sends the same text', async () => {
    const { lazy } = await import('../../src/lobbies/effects')
    let made = 0
    const snapshot = lazy(async () => ({ n: ++made }))
    const first = await snapshot.value()
    const again = await Promise.all(Array.from({ length: 50 }, () => snapshot.value()))
    expect(made).toBe(1)
    expect(first.json).toBe('{"n":1}')
    expect(again.every((s) => s === first)).toBe(true)
  })
})
