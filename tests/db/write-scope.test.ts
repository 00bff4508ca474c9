// The store functions are async (db/client.ts): a write transaction stays open across its awaits, so other requests
// must not see what it has not committed, nor write into it, nor cache what it replaces. Each test holds a transaction
// open on a promise the test resolves, and does meanwhile what another request would.
import { describe, expect, test } from 'bun:test'
import { cachedUser, insertUser, updateUser } from '../../src/accounts/store'
import { snowflake } from '../../src/core/snowflake'
import { db, inWriteTransaction, queuedTransaction, reading, transaction, write } from '../../src/db/client'
import { users } from '../../src/accounts/tables'
import { api, makeUser, onPostgres, server } from '../helpers'

/** A promise and its resolve, to hold a transaction open until the test lets it go. */
function gate() {
  let open!: () => void
  const promise = new Promise<void>((resolve) => {
    open = resolve
  })
  return { promise, open }
}

const newUser = () => ({ id: snowflake(), username: `w${snowflake()}`, createdAt: Date.now() })

/**
 * A transaction that runs `work` and then stays open (awaiting) until `release()`, rolled back at the end when
 * `rollBack`; answered once `work` has run, with the transaction's promise.
 */
async function openTransaction(work: () => Promise<unknown>, { rollBack = false } = {}) {
  const written = gate()
  const released = gate()
  const held: Promise<void> = transaction(async () => {
    await work()
    written.open()
    await released.promise
    if (rollBack) throw new Error('roll back')
  })
  await written.promise
  return { held, release: released.open }
}

describe.skipIf(onPostgres)(
  'a write transaction open across an await (SQLite only, skipped on PostgreSQL: one write connection and its mutex)',
  () => {
    test('another request reading meanwhile does not see its uncommitted row, which is then rolled back', async () => {
      await server()
      const row = newUser()
      const { held, release } = await openTransaction(
        async () => {
          await insertUser(row)
          expect((await cachedUser(row.id))?.username).toBe(row.username) // the transaction reads its own row
        },
        { rollBack: true },
      )
      // Another request, while the transaction is open: the row is not there, through the store or the API.
      expect(inWriteTransaction()).toBe(false)
      expect(await cachedUser(row.id)).toBeUndefined()
      expect((await db().select().from(users).all()).some((u) => u.id === row.id)).toBe(false)
      expect(await reading(async () => await cachedUser(row.id))).toBeUndefined()
      release()
      await expect(held).rejects.toThrow('roll back')
      // Rolled back, and nothing cached from it.
      expect(await cachedUser(row.id)).toBeUndefined()
    })

    test('a write outside the transaction waits for it and commits on its own, whatever the transaction does', async () => {
      const user = await makeUser()
      const row = newUser()
      const { held, release } = await openTransaction(async () => await insertUser(row), { rollBack: true })
      let renamed = false
      const other = updateUser(user.id, { globalName: 'kept' }).then(() => {
        renamed = true
      })
      await Bun.sleep(20)
      expect(renamed).toBe(false) // behind the write mutex, not inside the open transaction
      release()
      await expect(held).rejects.toThrow('roll back')
      await other
      expect((await cachedUser(user.id))?.globalName).toBe('kept')
      expect(await cachedUser(row.id)).toBeUndefined()
    })

    test('a row read from the read connection while a transaction changes it is not served after the commit', async () => {
      const user = await makeUser()
      const token = user.token
      expect((await api('GET', '/users/@me', { token })).body.global_name).toBeNull()
      const { held, release } = await openTransaction(async () => await updateUser(user.id, { globalName: 'renamed' }))
      // Read (and cached) meanwhile: the committed row, the old name.
      expect((await cachedUser(user.id))?.globalName).toBeNull()
      expect((await api('GET', '/users/@me', { token })).body.global_name).toBeNull()
      release()
      await held
      // Once the transaction committed, nobody is answered the row it replaced.
      expect((await cachedUser(user.id))?.globalName).toBe('renamed')
      expect((await api('GET', '/users/@me', { token })).body.global_name).toBe('renamed')
    })

    test('a snapshot begun before a commit does not cache the row the commit replaced', async () => {
      const user = await makeUser()
      await cachedUser(user.id) // cached
      const inSnapshot = gate()
      const committed = gate()
      const snapshot = reading(async () => {
        await db().select().from(users).limit(1).all() // the snapshot starts here
        inSnapshot.open()
        await committed.promise
        return (await cachedUser(user.id))?.globalName // forgotten by the commit: read from this (older) snapshot
      })
      await inSnapshot.promise
      await updateUser(user.id, { globalName: 'newer' })
      committed.open()
      expect(await snapshot).toBeNull() // what the snapshot shows
      expect((await cachedUser(user.id))?.globalName).toBe('newer') // and it was not kept
    })

    test('queued writes wait for an open transaction and commit in their own batch', async () => {
      const row = newUser()
      const { held, release } = await openTransaction(async () => await insertUser(row))
      const queuedRow = newUser()
      const queued = queuedTransaction(async () => {
        await insertUser(queuedRow)
        return 'queued'
      })
      await Bun.sleep(20)
      expect(await cachedUser(queuedRow.id)).toBeUndefined()
      release()
      await held
      expect(await queued).toBe('queued')
      expect((await cachedUser(queuedRow.id))?.id).toBe(queuedRow.id)
    })
  },
)

describe.skipIf(onPostgres)('the read connection (SQLite only, skipped on PostgreSQL: a query_only connection)', () => {
  test('refuses a write made outside a write scope', async () => {
    await server()
    expect(() => db().insert(users).values(newUser()).run()).toThrow(/readonly|read-only|query_only/i)
    const row = newUser()
    await write((w) => w.insert(users).values(row).run())
    expect((await cachedUser(row.id))?.id).toBe(row.id)
  })
})

describe('transactions on either database', () => {
  test('a transaction inside a transaction is a savepoint: undone alone when it throws', async () => {
    await server()
    const outer = newUser()
    const inner = newUser()
    await transaction(async () => {
      await insertUser(outer)
      await expect(
        transaction(async () => {
          await insertUser(inner)
          throw new Error('inner')
        }),
      ).rejects.toThrow('inner')
    })
    expect((await cachedUser(outer.id))?.id).toBe(outer.id)
    expect(await cachedUser(inner.id)).toBeUndefined()
  })
})
