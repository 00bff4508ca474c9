// Lobby messages: enforce_nonce makes a retried POST safe (the original back, 200, nothing sent again), even when the
// retries race; tts is kept and returned.
import { afterEach, describe, expect, test } from 'bun:test'
import type { Caller } from '../../src/core/caller'
import { clock } from '../../src/core/clock'
import { snowflake } from '../../src/core/snowflake'
import { api, resetWorld } from '../helpers'
import { connect } from './fake-gateway'
import { rawRow, rawSql } from '../db/raw'
import { createLobby, setup } from './helpers'

afterEach(resetWorld)

const userCaller = (id: string): Caller => ({ kind: 'user', userId: id, sessionId: `s-${id}`, sessionIdHash: 'h' })
const rows = async (lobbyId: string) =>
  (await rawRow<{ n: number }>('SELECT count(*) AS n FROM lobby_messages WHERE lobby_id = ?', lobbyId))!.n

async function world() {
  const { bot, players } = await setup(2)
  const [a, b] = players
  const lobby = await createLobby(bot, { members: [{ id: a.id }, { id: b.id }] })
  const watcher = await connect(userCaller(b.id))
  const send = (body: object, token = a.bearer, lobbyId = lobby.id) =>
    api('POST', `/lobbies/${lobbyId}/messages`, { token, body })
  return { bot, a, b, lobby, watcher, send }
}

describe('enforce_nonce', () => {
  test('the same nonce again within 5 minutes: the original message, 200, no second event', async () => {
    const { lobby, watcher, send } = await world()
    const first = await send({ content: 'gg', nonce: 'n-1', enforce_nonce: true })
    expect(first.status).toBe(201)
    expect(first.body.nonce).toBe('n-1')
    const retry = await send({ content: 'gg (retry)', nonce: 'n-1', enforce_nonce: true })
    expect(retry.status).toBe(200)
    expect(retry.body).toEqual(first.body)
    expect(watcher.events('LOBBY_MESSAGE_CREATE')).toHaveLength(1)
    expect(await rows(lobby.id)).toBe(1)
    await watcher.close()
  })

  test('30 concurrent retries make exactly one message and one event', async () => {
    const { lobby, watcher, send } = await world()
    const replies = await Promise.all(
      Array.from({ length: 30 }, () => send({ content: 'once', nonce: 4242, enforce_nonce: true })),
    )
    expect(replies.filter((r) => r.status === 201)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 200)).toHaveLength(29)
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1)
    expect(replies.every((r) => r.body.nonce === 4242)).toBe(true)
    expect(await rows(lobby.id)).toBe(1)
    expect(watcher.events('LOBBY_MESSAGE_CREATE')).toHaveLength(1)
    // The database holds the rule too: a second row with the same enforced nonce is refused.
    const copy =
      'INSERT INTO lobby_messages (id, lobby_id, application_id, author_id, content, nonce, enforce_nonce, created_at) SELECT ?, lobby_id, application_id, author_id, content, nonce, enforce_nonce, created_at FROM lobby_messages WHERE lobby_id = ?'
    await expect(rawSql(copy, snowflake(), lobby.id)).rejects.toThrow(/UNIQUE|unique/)
    await watcher.close()
  })

  test('another author, another lobby, no enforce_nonce, or after 5 minutes: a new message', async () => {
    const { bot, a, b, lobby, send } = await world()
    const first = await send({ content: 'x', nonce: 'same', enforce_nonce: true })
    expect((await send({ content: 'x', nonce: 'same', enforce_nonce: true }, b.bearer)).status).toBe(201)
    const other = await createLobby(bot, { members: [{ id: a.id }] })
    expect((await send({ content: 'x', nonce: 'same', enforce_nonce: true }, a.bearer, other.id)).status).toBe(201)
    // Without enforce_nonce a nonce is only echoed.
    const plain = [await send({ content: 'x', nonce: 'same' }), await send({ content: 'x', nonce: 'same' })]
    expect(plain.map((r) => r.status)).toEqual([201, 201])
    expect(plain[0].body.id).not.toBe(plain[1].body.id)
    expect((await send({ content: 'x', nonce: 'same', enforce_nonce: true })).body.id).toBe(first.body.id)
    // Another value is another nonce.
    expect((await send({ content: 'x', nonce: 'Same', enforce_nonce: true })).status).toBe(201)

    clock.advance(5 * 60_000 - 1000)
    expect((await send({ content: 'x', nonce: 'same', enforce_nonce: true })).body.id).toBe(first.body.id)
    clock.advance(1000)
    const later = await send({ content: 'later', nonce: 'same', enforce_nonce: true })
    expect(later.status).toBe(201)
    expect(later.body.id).not.toBe(first.body.id)
    // The new one now holds the nonce.
    expect((await send({ content: 'x', nonce: 'same', enforce_nonce: true })).body.id).toBe(later.body.id)
    expect(await rows(lobby.id)).toBe(6)
  })
})

describe('tts', () => {
  test('stored and returned: in the answer, the event and the history; false by default', async () => {
    const { a, lobby, watcher, send } = await world()
    const spoken = await send({ content: 'hear me', tts: true })
    expect(spoken.status).toBe(201)
    expect(spoken.body.tts).toBe(true)
    const quiet = await send({ content: 'read me' })
    expect(quiet.body.tts).toBe(false)
    expect(watcher.events('LOBBY_MESSAGE_CREATE').map((m: any) => m.tts)).toEqual([true, false])
    const history = await api('GET', `/lobbies/${lobby.id}/messages`, { token: a.bearer })
    expect(history.body.map((m: any) => [m.content, m.tts])).toEqual([
      ['read me', false],
      ['hear me', true],
    ])
    await watcher.close()
  })
})
