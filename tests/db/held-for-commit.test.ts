// What a transaction holds for its COMMIT (db/client.ts holdForCommit; the Gateway's dispatches given inside a
// transaction): it goes out once the transaction commits, never when it (or the savepoint it was given in) rolls back,
// and a group-commit batch sends each write's own only when that write stands. On SQLite and on PostgreSQL.
import { describe, expect, test } from 'bun:test'
import { eq, sql } from 'drizzle-orm'
import * as clusterTables from '../../src/cluster/tables'
import {
  type CommitHolder,
  type DB,
  db,
  holdForCommit,
  queuedTransaction,
  sendWithCommit,
  transaction,
  write,
} from '../../src/db/client'
import { uniqueViolation } from '../../src/db/errors'
import { pgTwin } from '../../src/db/pg/twins'
import { onPostgres, server } from '../helpers'
import { rawSql } from './raw'

// A table to write in: the Gateway's outbox (empty when no cluster runs), in the dialect the test server runs on.
const t = {
  gatewayOutbox: (onPostgres
    ? pgTwin(clusterTables.gatewayOutbox)
    : clusterTables.gatewayOutbox) as typeof clusterTables.gatewayOutbox,
}
const insertRow = (eventId: string) =>
  db().insert(t.gatewayOutbox).values({ eventId, entry: '{}', createdAt: 0 }).run() as unknown as Promise<unknown>
const rowsNamed = async (...ids: string[]) =>
  (await rawSql<{ event_id: string }>('SELECT event_id FROM gateway_outbox ORDER BY id'))
    .map((r) => r.event_id)
    .filter((id) => ids.includes(id))
/** The database connection's process on PostgreSQL: the same one for a transaction and its holder's behind. */
const backendPid = async () =>
  (
    await (db() as unknown as { execute(q: unknown): Promise<{ pid: number }[]> }).execute(
      sql`SELECT pg_backend_pid() AS pid`,
    )
  )[0].pid

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

  test('behind the COMMIT (PostgreSQL): the holder’s own transaction sees what committed, on the same connection; after gets its answer', async () => {
    await server()
    const pids: number[] = []
    const seen: unknown[] = []
    const holder: CommitHolder<string, string[]> = {
      before: (items) => Promise.all(items.map((i) => insertRow(i))).then(() => undefined),
      behind: (_items, run) =>
        run(async () => {
          if (onPostgres) pids.push(await backendPid())
          return await rowsNamed('behind a', 'behind b')
        }),
      after: async (items, behind) => void seen.push(items, await behind),
    }
    await transaction(async () => {
      if (onPostgres) pids.push(await backendPid())
      holdForCommit(holder, 'behind a')
      holdForCommit(holder, 'behind b')
    })
    // On SQLite no transaction runs behind (nothing to pipeline): after gets nothing from it.
    expect(seen).toEqual([['behind a', 'behind b'], onPostgres ? ['behind a', 'behind b'] : undefined])
    if (onPostgres) expect(new Set(pids).size).toBe(1)
    // Rolled back: nothing of the holder runs.
    await expect(
      transaction(async () => {
        holdForCommit(holder, 'gone')
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    expect(seen).toHaveLength(2)
    expect(await rowsNamed('gone')).toEqual([])
  })

  test('what before sends without waiting commits with the transaction, even when the transaction behind it rolls back', async () => {
    await server()
    const holder: CommitHolder<string, void> = {
      // Sent, not awaited here: the COMMIT must not go out before it (it would then run in the transaction behind).
      before: (items) => void Promise.all(items.map((i) => insertRow(i))).catch(() => {}),
      behind: (_items, run) =>
        run(async () => {
          await insertRow('behind, rolled back')
          throw new Error('the transaction behind rolls back')
        }),
      after: async (_items, behind) => void (await behind?.catch(() => {})),
    }
    for (let i = 0; i < 5; i++) {
      await queuedTransaction(async () => void holdForCommit(holder, `before ${i}`))
      expect(await rowsNamed(`before ${i}`)).toEqual([`before ${i}`])
    }
    expect(await rowsNamed('behind, rolled back')).toEqual([])
  })

  test('a statement of before that fails: the transaction throws its error and commits nothing', async () => {
    await server()
    await write(() => insertRow('taken'))
    const [taken] = await (db() as DB).select().from(t.gatewayOutbox).where(eq(t.gatewayOutbox.eventId, 'taken'))
    let after = 0
    const holder: CommitHolder<string, void> = {
      // The id is taken: the insert fails, and PostgreSQL answers the COMMIT sent behind it with ROLLBACK.
      before: () =>
        db()
          .insert(t.gatewayOutbox)
          .values({ id: taken.id, eventId: 'clash', entry: '{}', createdAt: 0 })
          .run() as never,
      after: () => void after++,
    }
    await expect(
      transaction(async () => {
        await insertRow('undone')
        holdForCommit(holder, 'x')
      }),
    ).rejects.toThrow()
    expect(after).toBe(0)
    expect(await rowsNamed('undone', 'clash')).toEqual([])
  })

  test('a statement sent with the COMMIT that fails fails its own write only: in a batch, in a savepoint', async () => {
    await server()
    await write(() => insertRow('taken'))
    const [taken] = await (db() as DB).select().from(t.gatewayOutbox).where(eq(t.gatewayOutbox.eventId, 'taken'))
    const clash = () =>
      db().insert(t.gatewayOutbox).values({ id: taken.id, eventId: 'clash', entry: '{}', createdAt: 0 }).run()
    // On PostgreSQL the failure shows only at the COMMIT: the batch runs again with a savepoint per write.
    const results = await Promise.allSettled([
      queuedTransaction(async () => sendWithCommit(insertRow('sent first')), { independent: true }),
      queuedTransaction(async () => sendWithCommit(clash()), { independent: true }),
      queuedTransaction(async () => sendWithCommit(insertRow('sent third')), { independent: true }),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    expect(uniqueViolation((results[1] as PromiseRejectedResult).reason)).toBeDefined()
    expect(await rowsNamed('sent first', 'clash', 'sent third')).toEqual(['sent first', 'sent third'])
    await transaction(async () => {
      const inner = transaction(async () => sendWithCommit(clash()))
      expect(uniqueViolation(await inner.catch((e) => e))).toBeDefined()
      await sendWithCommit(insertRow('after the savepoint'))
    })
    expect(await rowsNamed('after the savepoint', 'clash')).toEqual(['after the savepoint'])
  })
  test('statements sent unawaited right before a ROLLBACK or a savepoint go out before it: none commits alone, none is undone with the savepoint', async () => {
    await server()
    // The transaction throws at once: its ROLLBACK must follow the insert (after it, the insert would commit alone).
    await expect(
      transaction(async () => {
        void sendWithCommit(insertRow('sent, then thrown'))
        throw new Error('thrown at once')
      }),
    ).rejects.toThrow('thrown at once')
    // A savepoint begun at once and rolled back: the insert sent before it is not part of it.
    await transaction(async () => {
      void sendWithCommit(insertRow('sent, then a savepoint'))
      await transaction(async () => {
        throw new Error('savepoint')
      }).catch(() => undefined)
    })
    // The same in a pipelined batch: a write that throws makes the batch run again; one that sent keeps its row once.
    const results = await Promise.allSettled([
      queuedTransaction(async () => void sendWithCommit(insertRow('batch, sent')), { independent: true }),
      queuedTransaction(
        async () => {
          throw new Error('batch, thrown')
        },
        { independent: true },
      ),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected'])
    expect(await rowsNamed('sent, then thrown', 'sent, then a savepoint', 'batch, sent')).toEqual([
      'sent, then a savepoint',
      'batch, sent',
    ])
  })
  test('a savepoint in a write of a pipelined batch rolls back its own statements only, not its neighbours sent meanwhile', async () => {
    await server()
    const results = await Promise.allSettled([
      queuedTransaction(
        async () => {
          await transaction(async () => {
            await insertRow('inner, rolled back')
            await Bun.sleep(20) // the neighbour's insert goes out meanwhile
            throw new Error('inner')
          }).catch(() => undefined)
          await insertRow('outer')
        },
        { independent: true },
      ),
      queuedTransaction(
        async () => {
          await Bun.sleep(5) // after the savepoint began
          await insertRow('neighbour')
        },
        { independent: true },
      ),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled'])
    expect(await rowsNamed('inner, rolled back', 'outer', 'neighbour')).toEqual(['outer', 'neighbour'])
  })
})
