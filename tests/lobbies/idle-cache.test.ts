// The cached lobby row and its idle deadline (lobbies/store.ts): a restart of the countdown keeps a cached row whose
// deadline is set, a clear keeps one whose deadline is unset. What reads the cached row asks whether the deadline is
// set (a member coming online, the last one leaving), so its answer must follow the row's, also when two transactions
// on PostgreSQL change the deadline at once and a request reads the lobby between their COMMITs. PostgreSQL only:
// on SQLite transactions run one at a time.
import { afterEach, describe, expect, test } from 'bun:test'
import { clock } from '../../src/core/clock'
import { shareInvalidations } from '../../src/db/cache'
import { type DB, lockForUpdate, transaction } from '../../src/db/client'
import { armIdleDeadline } from '../../src/lobbies/activity'
import { cachedLobby, clearIdleDeadline, restartIdleDeadline, updateLobbyMetadata } from '../../src/lobbies/store'
import { clearIdleDeadlinesOf, countMembers } from '../../src/lobbies/members-store'
import { pgTwin } from '../../src/db/pg/twins'
import * as lobbyTables from '../../src/lobbies/tables'
import { onPostgres, resetWorld } from '../helpers'
import { rawRow } from '../db/raw'
import { createLobby, setup } from './helpers'

const lobbies = pgTwin(lobbyTables.lobbies)

afterEach(() => {
  shareInvalidations(undefined)
  resetWorld()
})

const deadline = async (lobbyId: string) =>
  (await rawRow<{ idle_deadline: number | null }>('SELECT idle_deadline FROM lobbies WHERE id = ?', lobbyId))
    ?.idle_deadline
const cachedDeadline = async (lobbyId: string) => (await cachedLobby(lobbyId))?.idleDeadline

/**
 * What the transaction sends from now on runs only once another transaction holding the lobby's row has committed: a
 * statement ahead of it on its connection waits for that lock (as statements of a busy batch queue behind one that
 * waits). Sent, not awaited; given time to reach the server.
 */
async function queueBehindLock(tx: DB, lobbyId: string): Promise<{ locked: Promise<void> }> {
  const locked = lockForUpdate(tx, lobbies as never, lobbies.id as never, lobbyId)
  locked.catch(() => undefined)
  await Bun.sleep(100)
  return { locked }
}

/** A transaction that runs `step`, then stays open until `commit()` (resolved once it committed). */
async function heldOpen(step: (tx: DB) => Promise<unknown>): Promise<{ commit(): Promise<void> }> {
  const stepped = Promise.withResolvers<void>()
  const release = Promise.withResolvers<void>()
  const done = transaction(async (tx) => {
    await step(tx)
    stepped.resolve()
    await release.promise
  })
  await Promise.race([stepped.promise, done])
  return {
    commit: () => {
      release.resolve()
      return done
    },
  }
}

/** A lobby of one member, its deadline unset, and its row cached. */
async function unsetLobby() {
  const { bot, players } = await setup(1)
  const lobby = await createLobby(bot, { members: [{ id: players[0].id }] })
  await transaction(() => clearIdleDeadline(lobby.id))
  expect(await cachedDeadline(lobby.id)).toBeNull()
  return { bot, lobby }
}

describe.skipIf(!onPostgres)('the cached lobby row follows its idle deadline', () => {
  test('a clear that waited for a restart’s COMMIT: the last member leaving starts the countdown', async () => {
    const { lobby } = await unsetLobby()
    // A message while nobody is online: the countdown starts (not committed yet).
    const restart = await heldOpen(() => restartIdleDeadline(lobby.id, clock.now()))
    expect(await cachedDeadline(lobby.id)).toBeNull() // a request reads the committed row (unset) and keeps it
    // A message with a member online: the cached row says unset; its UPDATE runs after the restart's COMMIT.
    const clear = await heldOpen(async (tx) => {
      await queueBehindLock(tx, lobby.id)
      await clearIdleDeadline(lobby.id)
    })
    await restart.commit()
    expect(await cachedDeadline(lobby.id)).toBeNumber() // a request reads the restart's committed row
    await clear.commit()
    expect(await deadline(lobby.id)).toBeNull()
    // The member goes offline: the countdown must start (a cached "set" would skip it, and the lobby never closes).
    await transaction(() => armIdleDeadline(lobby.id))
    expect(await deadline(lobby.id)).toBeNumber()
  })

  test('a restart that waited for a clear’s COMMIT: a member coming online stops the countdown', async () => {
    const { bot, players } = await setup(1)
    const [a] = players
    const lobby = await createLobby(bot, { members: [{ id: a.id }] })
    expect(await cachedDeadline(lobby.id)).toBeNumber() // cached, set
    // A member online sends a message: the countdown stops (not committed yet).
    const clear = await heldOpen(async () => {
      await clearIdleDeadline(lobby.id)
      await countMembers(lobby.id) // answered after the UPDATE: it holds the row's lock now
    })
    expect(await cachedDeadline(lobby.id)).toBeNumber() // a request reads the committed row (set) and keeps it
    // A message when nobody seemed online: the cached row says set; its UPDATE waits for the clear's lock.
    const started = Promise.withResolvers<void>()
    const restarting = heldOpen(async () => {
      const restarted = restartIdleDeadline(lobby.id, clock.now())
      started.resolve()
      await restarted
    })
    await started.promise
    await clear.commit()
    const restart = await restarting
    expect(await cachedDeadline(lobby.id)).toBeNull() // a request reads the clear's committed row
    await restart.commit()
    // The member comes online (again): the countdown must not run while they are (nor the cache say it does not).
    await clearIdleDeadlinesOf(a.id)
    expect(await deadline(lobby.id)).toBeNull()
    expect(await cachedDeadline(lobby.id)).toBeNull()
  })

  test('a clear whose UPDATE is answered after its transaction’s work was done: other nodes are told to forget the lobby', async () => {
    const { bot, lobby } = await unsetLobby()
    const other = await createLobby(bot)
    // What several nodes would be told to forget (cluster/gateway.ts), by cache.
    const told: [string, string[] | null][] = []
    shareInvalidations((cache, keys) => void told.push([cache, keys]))
    const restart = await heldOpen(() => restartIdleDeadline(lobby.id, clock.now()))
    expect(await cachedDeadline(lobby.id)).toBeNull()
    // Its work done at once (what it forgot so far, another lobby, is told with its COMMIT); the clear's UPDATE runs
    // after the restart's COMMIT, and changes the row then.
    const done = Promise.withResolvers<void>()
    const clear = transaction(async (tx) => {
      await updateLobbyMetadata(other.id, { round: '2' })
      await queueBehindLock(tx, lobby.id)
      await clearIdleDeadline(lobby.id)
      done.resolve()
    })
    await done.promise
    await Bun.sleep(50)
    expect(told.some(([cache, keys]) => cache === 'lobbies' && keys?.includes(other.id))).toBe(true)
    await restart.commit() // it told its own (the lobby, which it restarted)
    const since = told.length
    await clear
    expect(await deadline(lobby.id)).toBeNull()
    expect(told.slice(since).some(([cache, keys]) => cache === 'lobbies' && keys?.includes(lobby.id))).toBe(true)
  })
})
