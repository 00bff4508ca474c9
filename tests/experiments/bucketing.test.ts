// User bucketing against the reference evaluation in helpers.ts (written from the spec, with Bun's own Murmur3):
// random definitions and IDs, overrides, A/A, holdouts, and stability across revisions and a fresh start.
import { beforeEach, describe, expect, test } from 'bun:test'
import { compileAll, evaluate, userArray } from '../../src/experiments/bucketing'
import { userAssignments } from '../../src/experiments/service'
import { readDefinitions } from '../../src/experiments/store'
import { resetWorld } from '../helpers'
import { load, mmh3, prng, randomRanges, refEvaluate, refUserArray, type Def } from './helpers'

beforeEach(resetWorld)

function randomIds(rand: () => number, n: number): string[] {
  return Array.from({ length: n }, () =>
    String((BigInt(Math.floor(rand() * 2 ** 40)) << 22n) | BigInt(Math.floor(rand() * 4096))),
  )
}

function randomDefinitions(rand: () => number, ids: string[], count: number): Def[] {
  const defs: Def[] = []
  for (let i = 0; i < count; i++) {
    const d: Def = {
      name: `2025-${String(1 + (i % 12)).padStart(2, '0')}_random_${i}`,
      kind: 'user',
      revision: Math.floor(rand() * 10),
      populations: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
        // Some populations cover only part of the positions, so later ones get their turn.
        ranges: randomRanges(rand, 1 + Math.floor(rand() * 4)).filter(() => rand() < 0.7),
      })),
    }
    if (rand() < 0.3) d.hash_key = `key_${i}`
    if (rand() < 0.2) d.aa_mode = true
    if (rand() < 0.3) d.trigger_debugging = true
    if (rand() < 0.4) d.overrides = [{ b: Math.floor(rand() * 3), k: ids.filter(() => rand() < 0.05) }]
    if (i > 0 && rand() < 0.4) d.holdout = { name: defs[Math.floor(rand() * i)].name, bucket: Math.floor(rand() * 4) }
    defs.push(d)
  }
  return defs
}

describe('user bucketing', () => {
  test('matches the reference evaluation for 40 random experiments × 300 IDs', async () => {
    const rand = prng(1234)
    const ids = randomIds(rand, 300)
    const defs = randomDefinitions(rand, ids, 40)
    await load(defs)
    let overridden = 0
    let heldOut = 0
    for (const id of ids) {
      const arrays = await userAssignments(id)
      expect(arrays).toHaveLength(40)
      arrays.forEach((array, i) => {
        const expected = refUserArray(defs, defs[i].name, id)
        expect(array as unknown[]).toEqual(expected)
        if (expected[3] === 0) overridden++
        if (expected.length === 11) heldOut++
      })
    }
    // The random file exercised both rules.
    expect(overridden).toBeGreaterThan(10)
    expect(heldOut).toBeGreaterThan(10)
  })

  test('overrides come first: bucket from the override, override flag 0, no population', async () => {
    const id = '1084179945133187083'
    const defs: Def[] = [
      {
        name: 'ov',
        kind: 'user',
        revision: 2,
        aa_mode: true,
        populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }] }],
        overrides: [{ b: 3, k: [id] }],
      },
    ]
    await load(defs)
    const position = mmh3(`ov:${id}`) % 10000
    // A/A does not hide an override.
    expect(await userAssignments(id)).toEqual([[mmh3('ov'), 2, 3, 0, -1, position, 1, 0]])
    expect(await userAssignments('42')).toEqual([[mmh3('ov'), 2, -1, -1, 0, mmh3('ov:42') % 10000, 1, 0]])
  })

  test('A/A mode: bucket None (-1) though a population holds the position', async () => {
    await load([
      {
        name: 'aa',
        kind: 'user',
        revision: 1,
        aa_mode: true,
        trigger_debugging: true,
        populations: [{ ranges: [{ bucket: 2, rollout: [{ s: 0, e: 9999 }] }] }],
      },
    ])
    expect(await userAssignments('7')).toEqual([[mmh3('aa'), 1, -1, -1, 0, mmh3('aa:7') % 10000, 1, 1]])
  })

  test('the first population whose range holds the position wins; the range ends are inclusive', async () => {
    const id = '555'
    const p = mmh3(`edges:${id}`) % 10000
    const defs: Def[] = [
      {
        name: 'edges',
        kind: 'user',
        revision: 1,
        populations: [
          { ranges: [{ bucket: 9, rollout: [{ s: 0, e: p - 1 }] }] },
          { ranges: [{ bucket: 1, rollout: [{ s: p - 5, e: p }] }] },
          { ranges: [{ bucket: 2, rollout: [{ s: 0, e: 9999 }] }] },
        ],
      },
    ]
    expect(p).toBeGreaterThan(5)
    await load(defs)
    expect((await userAssignments(id))[0].slice(2, 6)).toEqual([1, -1, 1, p])
    defs[0].populations[1].ranges[0].rollout[0] = { s: p + 1, e: 9999 }
    await load(defs)
    expect((await userAssignments(id))[0].slice(2, 6)).toEqual([2, -1, 2, p])
    defs[0].populations[1].ranges[0].rollout[0] = { s: p, e: p }
    await load(defs)
    expect((await userAssignments(id))[0].slice(2, 6)).toEqual([1, -1, 1, p])
    // No population holds it: None, population -1.
    defs[0].populations = [{ ranges: [{ bucket: 1, rollout: [{ s: p + 1, e: 9999 }] }] }]
    await load(defs)
    expect((await userAssignments(id))[0].slice(2, 6)).toEqual([-1, -1, -1, p])
  })

  test('hash_key replaces the name in the position, not in the hash', async () => {
    await load([
      {
        name: 'named',
        kind: 'user',
        revision: 1,
        hash_key: 'other',
        populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }] }],
      },
    ])
    expect((await userAssignments('99'))[0]).toEqual([mmh3('named'), 1, 1, -1, 0, mmh3('other:99') % 10000, 0, 0])
  })
})

describe('holdouts', () => {
  const everyone = (bucket: number) => [{ ranges: [{ bucket, rollout: [{ s: 0, e: 9999 }] }] }]

  test("in the holdout's bucket: None, with the holdout name, revision and bucket (fields 9-11)", async () => {
    const defs: Def[] = [
      { name: '2025-02_user_profile_editing', kind: 'user', revision: 2, populations: everyone(0) },
      {
        name: 'held',
        kind: 'user',
        revision: 3,
        trigger_debugging: true,
        holdout: { name: '2025-02_user_profile_editing', bucket: 0 },
        populations: everyone(1),
      },
    ]
    await load(defs)
    const [holdout, held] = await userAssignments('123')
    expect(holdout).toEqual([
      mmh3('2025-02_user_profile_editing'),
      2,
      0,
      -1,
      0,
      mmh3('2025-02_user_profile_editing:123') % 10000,
      0,
      0,
    ])
    expect(held).toEqual([
      mmh3('held'),
      3,
      -1,
      -1,
      0,
      mmh3('held:123') % 10000,
      0,
      1,
      '2025-02_user_profile_editing',
      2,
      0,
    ])
  })

  test('in another bucket of the holdout: the experiment applies and fields 9-11 are absent', async () => {
    await load([
      { name: 'h', kind: 'user', revision: 1, populations: everyone(1) },
      { name: 'x', kind: 'user', revision: 1, holdout: { name: 'h', bucket: 0 }, populations: everyone(4) },
    ])
    expect((await userAssignments('1'))[1]).toEqual([mmh3('x'), 1, 4, -1, 0, mmh3('x:1') % 10000, 0, 0])
  })

  test('an override beats the holdout; a holdout only disables an assigned bucket', async () => {
    await load([
      { name: 'h', kind: 'user', revision: 1, populations: everyone(0) },
      {
        name: 'x',
        kind: 'user',
        revision: 1,
        holdout: { name: 'h', bucket: 0 },
        populations: everyone(4),
        overrides: [{ b: 2, k: ['5'] }],
      },
      { name: 'y', kind: 'user', revision: 1, holdout: { name: 'h', bucket: 0 }, populations: [{ ranges: [] }] },
    ])
    expect((await userAssignments('5'))[1].slice(2, 5)).toEqual([2, 0, -1])
    expect((await userAssignments('5'))[2]).toEqual([mmh3('y'), 1, -1, -1, -1, mmh3('y:5') % 10000, 0, 0])
  })

  test("the holdout's bucket counts before its own A/A mode hides it; an overridden holdout bucket counts too", async () => {
    await load([
      {
        name: 'h',
        kind: 'user',
        revision: 1,
        aa_mode: true,
        populations: everyone(0),
        overrides: [{ b: 1, k: ['8'] }],
      },
      { name: 'x', kind: 'user', revision: 1, holdout: { name: 'h', bucket: 0 }, populations: everyone(4) },
      { name: 'z', kind: 'user', revision: 1, holdout: { name: 'h', bucket: 1 }, populations: everyone(4) },
    ])
    expect((await userAssignments('7'))[1]).toEqual([mmh3('x'), 1, -1, -1, 0, mmh3('x:7') % 10000, 0, 0, 'h', 1, 0])
    expect((await userAssignments('8'))[1][2]).toBe(4)
    expect((await userAssignments('8'))[2]).toEqual([mmh3('z'), 1, -1, -1, 0, mmh3('z:8') % 10000, 0, 0, 'h', 1, 1])
  })

  test('a holdout held out by its own holdout holds nothing out', async () => {
    await load([
      { name: 'a', kind: 'user', revision: 1, populations: everyone(0) },
      { name: 'b', kind: 'user', revision: 1, holdout: { name: 'a', bucket: 0 }, populations: everyone(1) },
      { name: 'c', kind: 'user', revision: 1, holdout: { name: 'b', bucket: 1 }, populations: everyone(2) },
    ])
    const [, b, c] = await userAssignments('3')
    expect(b[2]).toBe(-1)
    expect(c.slice(2, 5)).toEqual([2, -1, 0])
    expect(c).toHaveLength(8)
    expect(
      refEvaluate(
        [
          { name: 'a', kind: 'user', revision: 1, populations: everyone(0) },
          { name: 'b', kind: 'user', revision: 1, holdout: { name: 'a', bucket: 0 }, populations: everyone(1) },
          { name: 'c', kind: 'user', revision: 1, holdout: { name: 'b', bucket: 1 }, populations: everyone(2) },
        ],
        'c',
        '3',
      ).bucket,
    ).toBe(2)
  })
})

describe('stability', () => {
  test('a new revision that does not move ranges keeps every assignment', async () => {
    const rand = prng(99)
    const ids = randomIds(rand, 200)
    const defs = randomDefinitions(rand, ids, 10)
    await load(defs)
    const before: Awaited<ReturnType<typeof userAssignments>>[] = []
    for (const id of ids) before.push(await userAssignments(id))
    await load(defs.map((d) => ({ ...d, revision: d.revision + 1 })))
    for (const [i, id] of ids.entries()) {
      const after = await userAssignments(id)
      after.forEach((array, j) => {
        expect(array[1]).toBe((before[i][j][1] as number) + 1)
        expect([...array.slice(2, 8)]).toEqual([...before[i][j].slice(2, 8)])
      })
    }
  })

  test('definitions compiled afresh from the database (as after a restart) give the same arrays', async () => {
    const rand = prng(5)
    const ids = randomIds(rand, 100)
    await load(randomDefinitions(rand, ids, 15))
    const fresh = compileAll((await readDefinitions()).definitions)
    const now = Date.now()
    for (const id of ids)
      expect(fresh.map((c) => userArray(c, evaluate(c, id, undefined, now)))).toEqual(await userAssignments(id))
  })
})
