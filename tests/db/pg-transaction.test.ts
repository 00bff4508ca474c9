// PostgreSQL transactions (db/pg/client.ts): BEGIN goes out with the first statements, unawaited, and COMMIT checks
// what PostgreSQL answered. A statement that failed inside a transaction aborts it there even when the store caught
// its error: COMMIT is then answered ROLLBACK, and the transaction must fail, not report a commit that did not
// happen. On SQLite a failed statement leaves its transaction usable, so the file is skipped there.
import { describe, expect, test } from 'bun:test'
import { findUserByUsername, insertUser } from '../../src/accounts/store'
import { snowflake } from '../../src/core/snowflake'
import { transaction } from '../../src/db/client'
import { onPostgres, server } from '../helpers'

describe.skipIf(!onPostgres)('PostgreSQL transactions', () => {
  test('a statement that failed inside it (its error caught) fails the transaction: nothing of it commits', async () => {
    await server()
    const id = snowflake()
    const failed = await transaction(async () => {
      await insertUser({ id, username: `tx${id}`, createdAt: Date.now() })
      await insertUser({ id, username: `tx${id}b`, createdAt: Date.now() }).catch(() => undefined) // duplicate id
      return 'committed?'
    }).then(
      (value) => ({ value }),
      (error: { code?: string }) => ({ code: error.code }),
    )
    expect(failed).toEqual({ code: '25P02' })
    expect(await findUserByUsername(`tx${id}`)).toBeUndefined()
  })

  test('a transaction commits what it wrote, and one that throws commits nothing', async () => {
    await server()
    const [kept, undone] = [snowflake(), snowflake()]
    await transaction(() => insertUser({ id: kept, username: `tx${kept}`, createdAt: Date.now() }))
    const thrown = await transaction(async () => {
      await insertUser({ id: undone, username: `tx${undone}`, createdAt: Date.now() })
      throw new Error('undo')
    }).catch((error: Error) => error.message)
    expect(thrown).toBe('undo')
    expect((await findUserByUsername(`tx${kept}`))?.id).toBe(kept)
    expect(await findUserByUsername(`tx${undone}`)).toBeUndefined()
  })
})
