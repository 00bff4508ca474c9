// What a transaction holds for its COMMIT (db/client.ts holdForCommit; the Gateway's dispatches given inside a
// transaction): it goes out once the transaction commits, never when it (or the savepoint it was given in) rolls back,
// and a group-commit batch sends each write's own only when that write stands. On SQLite and on PostgreSQL.
import { describe, expect, test } from 'bun:test'
import { type CommitHolder, holdForCommit, queuedTransaction, transaction, write } from '../../src/db/client'
import { server } from '../helpers'

function recorder() {
  const seen: string[] = []
  const before: string[][] = []
  const holder: CommitHolder<string> = {
    before: (items) => void before.push([...items]),
    after: (items) => void seen.push(...items),
  }
  return { seen, before, hold: (item: string) => holdForCommit(holder, item) }
}

describe('held for the COMMIT', () => {
  test('a committed transaction: its items after COMMIT (in order, once), not before; outside one, nothing is held', async () => {
    await server()
    const r = recorder()
    expect(r.hold('outside')).toBe(false)
    await transaction(async () => {
      expect(r.hold('a')).toBe(true)
      expect(r.hold('b')).toBe(true)
      expect(r.seen).toEqual([])
    })
    expect(r.before).toEqual([['a', 'b']])
    expect(r.seen).toEqual(['a', 'b'])
    // A write whose statements commit one by one holds nothing.
    await write(async () => expect(r.hold('w')).toBe(false))
  })

  test('a rolled-back transaction and a rolled-back savepoint drop theirs', async () => {
    await server()
    const r = recorder()
    await expect(
      transaction(async () => {
        r.hold('gone')
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    await transaction(async () => {
      r.hold('kept')
      await expect(
        transaction(async () => {
          r.hold('savepoint gone')
          throw new Error('savepoint')
        }),
      ).rejects.toThrow('savepoint')
      await transaction(async () => void r.hold('savepoint kept'))
    })
    expect(r.seen).toEqual(['kept', 'savepoint kept'])
  })

  test('a group-commit batch: a write that throws sends nothing, the others theirs, each once', async () => {
    await server()
    const r = recorder()
    const results = await Promise.allSettled([
      queuedTransaction(async () => void r.hold('first')),
      queuedTransaction(async () => {
        r.hold('failing')
        throw new Error('this one fails')
      }),
      queuedTransaction(async () => void r.hold('third')),
    ])
    expect(results.map((x) => x.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(r.seen).toEqual(['first', 'third'])
  })
})
