// Writes queued in one event-loop turn share one transaction (db/client.ts queuedTransaction); each is undone alone
// when it throws, and every promise settles only after the COMMIT. Lobby messages are written this way.
import { beforeAll, describe, expect, test } from 'bun:test'
import { ApiError, Errors } from '../../src/core/errors'
import { queuedTransaction, rawDatabase, write } from '../../src/db/client'
import { lobbyOf } from '../../src/lobbies/access'
import { postMessage } from '../../src/lobbies/messages'
import { deleteLobbyRow } from '../../src/lobbies/store'
import { GatewayClient } from '../gateway-client'
import { api, onPostgres, server } from '../helpers'
import { rawRow } from '../db/raw'
import { createLobby, setup } from '../lobbies/helpers'

beforeAll(async () => {
  await server()
  if (!onPostgres) rawDatabase().run('CREATE TEMP TABLE IF NOT EXISTS queued_writes (n INTEGER NOT NULL)')
})

const rows = () =>
  (rawDatabase().query('SELECT n FROM queued_writes ORDER BY n').all() as { n: number }[]).map((r) => r.n)
const insert = (n: number) => rawDatabase().run('INSERT INTO queued_writes (n) VALUES (?)', [n])

describe.skipIf(onPostgres)(
  'queuedTransaction (SQLite only, skipped on PostgreSQL: a temp table of the write connection)',
  () => {
    test('one write that throws is undone alone; the others commit and resolve with their values', async () => {
      rawDatabase().run('DELETE FROM queued_writes')
      const results = await Promise.allSettled([
        queuedTransaction(() => {
          insert(1)
          return 'one'
        }),
        queuedTransaction(() => {
          insert(2)
          throw new Error('two fails')
        }),
        queuedTransaction(() => {
          insert(3)
          return 'three'
        }),
      ])
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
        'one',
        'two fails',
        'three',
      ])
      expect(rows()).toEqual([1, 3])
    })

    test('the writes of one turn run later, in one transaction, and are all committed when the promises resolve', async () => {
      rawDatabase().run('DELETE FROM queued_writes')
      const seenInside: number[][] = []
      const all = Array.from(
        { length: 20 },
        async (_, i) =>
          await queuedTransaction(() => {
            insert(i)
            seenInside.push(rows())
            return i
          }),
      )
      expect(rows()).toEqual([]) // queued, not yet run
      expect(await Promise.all(all)).toEqual(Array.from({ length: 20 }, (_, i) => i))
      expect(seenInside.at(-1)).toHaveLength(20) // all in one transaction
      expect(rawDatabase().inTransaction).toBe(false)
      expect(rows()).toHaveLength(20)
    })
  },
)

describe('lobby messages through the queue', () => {
  test('50 parallel messages: every one 201 with its own id, all stored, the lobby still readable', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot)
    const sent = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: `m${i}` } }),
      ),
    )
    expect(sent.map((r) => r.status)).toEqual(Array(50).fill(201))
    expect(new Set(sent.map((r) => r.body.id)).size).toBe(50)
    const page = await api('GET', `/lobbies/${lobby.id}/messages?limit=100`, { token: bot })
    expect(page.status).toBe(200)
    expect(page.body.map((m: { content: string }) => m.content).sort()).toEqual(
      Array.from({ length: 50 }, (_, i) => `m${i}`).sort(),
    )
  })

  test.skipIf(onPostgres)(
    'a message queued behind the lobby deletion is refused with 10031, not a server error (SQLite only, skipped on PostgreSQL: a write made in the same turn runs before the queued batch behind one mutex; on PostgreSQL they run side by side)',
    async () => {
      const { app, bot } = await setup(0)
      const lobby = await createLobby(bot)
      const botUser = (await api('GET', '/users/@me', { token: bot })).body.id as string
      const caller = { kind: 'bot' as const, userId: botUser, applicationId: app.id }
      const pending = postMessage(() => lobbyOf(caller, lobby.id), caller.userId, { content: 'late' })
      await write(async () => await deleteLobbyRow(lobby.id)) // in the same turn, before the queue commits
      const error = await pending.then(
        () => undefined,
        (e) => e,
      )
      expect(error).toBeInstanceOf(ApiError)
      expect((error as ApiError).body()).toMatchObject({ code: 10031 })
      expect(await rawRow('SELECT count(*) AS n FROM lobby_messages WHERE lobby_id = ?', lobby.id)).toEqual({ n: 0 })
    },
  )

  test.skipIf(onPostgres)(
    "a batch writes each lobby's idle deadline once, from its last message; a batch that fails writes none (SQLite only, skipped on PostgreSQL: a write made in the same turn runs before the queued batch behind one mutex; on PostgreSQL they run side by side)",
    async () => {
      const { bot } = await setup(0)
      const lobbies = [
        await createLobby(bot, { idle_timeout_seconds: 60 }),
        await createLobby(bot, { idle_timeout_seconds: 90 }),
      ]
      const deadline = async (id: string) =>
        (await rawRow<{ d: number | null }>('SELECT idle_deadline AS d FROM lobbies WHERE id = ?', id))?.d
      const before = (await Promise.all(lobbies.map((l) => deadline(l.id)))) as number[]
      await Bun.sleep(5)
      const sent = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          api('POST', `/lobbies/${lobbies[i % 2].id}/messages`, { token: bot, body: { content: `m${i}` } }),
        ),
      )
      expect(sent.map((r) => r.status)).toEqual(Array(20).fill(201))
      for (const [i, lobby] of lobbies.entries()) {
        const last = Math.max(
          ...sent.filter((r) => r.body.lobby_id === lobby.id).map((r) => Date.parse(r.body.timestamp)),
        )
        const seconds = [60, 90][i]
        expect((await deadline(lobby.id))!).toBeGreaterThan(before[i])
        // From the last message of the batch (a millisecond or two after its timestamp), not the first.
        expect((await deadline(lobby.id))! - seconds * 1000 - last).toBeWithin(0, 20)
      }
      // A batch where one message is refused (its lobby deleted meanwhile) runs again with savepoints: the other
      // message's deadline is written once, from it, and the refused one leaves nothing behind.
      const caller = {
        kind: 'bot' as const,
        userId: sent[0].body.author.id as string,
        applicationId: lobbies[0].application_id,
      }
      const settled = (await deadline(lobbies[1].id))!
      await Bun.sleep(5)
      const kept = postMessage(() => lobbyOf(caller, lobbies[1].id), caller.userId, { content: 'kept' })
      const doomed = postMessage(() => lobbyOf(caller, lobbies[0].id), caller.userId, { content: 'late' })
      await write(async () => await deleteLobbyRow(lobbies[0].id))
      const [ok, refused] = await Promise.allSettled([kept, doomed])
      expect(ok.status).toBe('fulfilled')
      expect(refused.status).toBe('rejected')
      const keptAt = Date.parse((ok as PromiseFulfilledResult<Awaited<typeof kept>>).value.message.timestamp)
      expect((await deadline(lobbies[1].id))!).toBeGreaterThan(settled)
      expect((await deadline(lobbies[1].id))! - 90_000 - keptAt).toBeWithin(0, 20)
      expect(await deadline(lobbies[0].id)).toBeUndefined()
    },
  )

  test('a batch of messages where one is refused (on PostgreSQL side by side, pipelined): the others commit, the lobby deadline moves, the refused one leaves nothing', async () => {
    const { bot } = await setup(0)
    const lobby = await createLobby(bot, { idle_timeout_seconds: 60 })
    const first = await api('POST', `/lobbies/${lobby.id}/messages`, { token: bot, body: { content: 'first' } })
    const caller = { kind: 'bot' as const, userId: first.body.author.id as string, applicationId: lobby.application_id }
    const deadline = async () =>
      (await rawRow<{ d: number }>('SELECT idle_deadline AS d FROM lobbies WHERE id = ?', lobby.id))!.d
    const before = await deadline()
    await Bun.sleep(5)
    const access = () => lobbyOf(caller, lobby.id)
    const settled = await Promise.allSettled([
      ...Array.from({ length: 8 }, (_, i) => postMessage(access, caller.userId, { content: `m${i}` })),
      postMessage(
        async () => {
          await access()
          throw Errors.unknownLobby()
        },
        caller.userId,
        { content: 'refused' },
      ),
    ])
    expect(settled.map((r) => r.status)).toEqual([...Array(8).fill('fulfilled'), 'rejected'])
    expect(((settled[8] as PromiseRejectedResult).reason as ApiError).body()).toMatchObject({ code: 10031 })
    const stored = await rawRow<{ n: number }>('SELECT count(*) AS n FROM lobby_messages WHERE lobby_id = ?', lobby.id)
    expect(stored).toEqual({ n: 9 })
    expect(await deadline()).toBeGreaterThan(before)
    const listed = await api('GET', `/lobbies/${lobby.id}/messages?limit=20`, { token: bot })
    expect(listed.body.map((m: { content: string }) => m.content).sort()).toEqual(
      ['first', ...Array.from({ length: 8 }, (_, i) => `m${i}`)].sort(),
    )
  })

  test('a batch of messages reaches a member’s socket in the messages’ order (on PostgreSQL they are written side by side)', async () => {
    const { bot, players } = await setup(1)
    const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
    const { client } = await GatewayClient.identified(players[0].token)
    try {
      const sent = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          // Every other one with an enforced nonce: two more statements before its insert.
          api('POST', `/lobbies/${lobby.id}/messages`, {
            token: bot,
            body: i % 2 ? { content: `m${i}`, nonce: `n${i}-${lobby.id}`, enforce_nonce: true } : { content: `m${i}` },
          }),
        ),
      )
      expect(sent.map((r) => r.status)).toEqual(Array(12).fill(201))
      const last = [...sent].sort((a, b) => (BigInt(a.body.id) < BigInt(b.body.id) ? -1 : 1)).at(-1)!.body.id
      await client.waitFor((f) => f.t === 'LOBBY_MESSAGE_CREATE' && f.d.id === last, 5000)
      const seen = client.dispatches('LOBBY_MESSAGE_CREATE').map((f) => f.d.id as string)
      expect(seen).toHaveLength(12)
      expect(seen).toEqual([...seen].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)))
    } finally {
      client.close()
    }
  })

  test('PUT /lobbies in one batch: parallel joins by one secret make one lobby holding every player', async () => {
    const { bot, players } = await setup(12)
    const secret = `batch-${crypto.randomUUID()}`
    const joined = await Promise.all(
      players.map((p) => api('PUT', '/lobbies', { token: p.bearer, body: { secret, member_metadata: { n: p.id } } })),
    )
    expect(joined.map((r) => r.status)).toEqual(Array(12).fill(200))
    expect(new Set(joined.map((r) => r.body.id)).size).toBe(1)
    const lobby = await api('GET', `/lobbies/${joined[0].body.id}`, { token: bot })
    expect(lobby.body.members.map((m: { id: string }) => m.id).sort()).toEqual(players.map((p) => p.id).sort())
    // Each answer shows the lobby as its own join left it: the last one in the batch sees everyone.
    expect(Math.max(...joined.map((r) => r.body.members.length))).toBe(12)
  })
})
