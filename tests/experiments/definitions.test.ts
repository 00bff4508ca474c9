// The definitions file: validation (refused whole, the message names the element and the field), replace-all,
// and a 50-experiment file round-tripped through load, list and show.
import { beforeEach, describe, expect, test } from 'bun:test'
import { DefinitionError, validateDefinitions } from '../../src/experiments/definitions'
import { listDefinitions, showDefinition } from '../../src/experiments/service'
import { api, resetWorld } from '../helpers'
import { load, mmh3, type Def } from './helpers'

const user = (name: string, extra: Partial<Def> = {}): Def => ({
  name,
  kind: 'user',
  revision: 1,
  populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }] }],
  ...extra,
})
const guild = (name: string, filters: Record<string, unknown>): Def => ({
  name,
  kind: 'guild',
  revision: 1,
  populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }], filters }],
})

function problems(file: unknown): string[] {
  try {
    validateDefinitions(file)
  } catch (error) {
    if (error instanceof DefinitionError) return error.problems
    throw error
  }
  return []
}

beforeEach(resetWorld)

describe('validation', () => {
  test("the issue's example: the fourth element's rollout end past 9999", () => {
    const file = [
      user('a'),
      user('b'),
      user('c'),
      {
        ...user('d'),
        populations: [
          {
            ranges: [
              { bucket: 0, rollout: [{ s: 0, e: 10 }] },
              { bucket: 1, rollout: [{ s: 11, e: 10000 }] },
            ],
          },
        ],
      },
    ]
    expect(problems(file)).toEqual(['[3].populations[0].ranges[1].rollout[0].e: must be ≤ 9999'])
    expect(
      problems([{ ...user('d'), populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }] }] }]),
    ).toEqual([])
  })

  test.each([
    ['not an array', { name: 'x' }, 'file: must be an array of experiments'],
    ['element not an object', [1], '[0]: must be an object'],
    ['unknown field', [{ ...user('a'), populaton: [] }], '[0].populaton: unknown field'],
    [
      'name missing',
      [{ ...user('a'), name: undefined }],
      '[0].name: must be 1-128 printable ASCII characters without spaces',
    ],
    ['name with a space', [user('a b')], '[0].name: must be 1-128 printable ASCII characters without spaces'],
    ['name not ASCII', [user('é')], '[0].name: must be 1-128 printable ASCII characters without spaces'],
    [
      'name 129 characters',
      [user('n'.repeat(129))],
      '[0].name: must be 1-128 printable ASCII characters without spaces',
    ],
    ['kind', [{ ...user('a'), kind: 'server' }], '[0].kind: must be "user" or "guild"'],
    ['revision negative', [user('a', { revision: -1 })], '[0].revision: must be ≥ 0'],
    ['revision fractional', [user('a', { revision: 1.5 })], '[0].revision: must be an integer'],
    [
      'hash_key',
      [user('a', { hash_key: '' })],
      '[0].hash_key: must be 1-128 printable ASCII characters without spaces',
    ],
    ['aa_mode', [{ ...user('a'), aa_mode: 1 }], '[0].aa_mode: must be true or false'],
    ['trigger_debugging', [{ ...user('a'), trigger_debugging: 'yes' }], '[0].trigger_debugging: must be true or false'],
    ['platform', [user('a', { platform: 'IOS' })], '[0].platform: must be one of DEVELOPER_PORTAL'],
    ['populations missing', [{ ...user('a'), populations: undefined }], '[0].populations: must be an array'],
    [
      'bucket below -1',
      [{ ...user('a'), populations: [{ ranges: [{ bucket: -2, rollout: [] }] }] }],
      '[0].populations[0].ranges[0].bucket: must be ≥ -1',
    ],
    [
      'rollout start negative',
      [{ ...user('a'), populations: [{ ranges: [{ bucket: 1, rollout: [{ s: -1, e: 5 }] }] }] }],
      '[0].populations[0].ranges[0].rollout[0].s: must be ≥ 0',
    ],
    [
      'rollout start after end',
      [{ ...user('a'), populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 6, e: 5 }] }] }] }],
      '[0].populations[0].ranges[0].rollout[0].s: must be ≤ e (5)',
    ],
    [
      'rollout unknown field',
      [{ ...user('a'), populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: 5, x: 1 }] }] }] }],
      '[0].populations[0].ranges[0].rollout[0].x: unknown field',
    ],
    [
      'filters on a user experiment',
      [{ ...user('a'), populations: [{ ranges: [], filters: { guild_ids: { guild_ids: ['1'] } } }] }],
      '[0].populations[0].filters: user experiments take no filters (the filters are about servers)',
    ],
    ['override bucket', [user('a', { overrides: [{ b: -2, k: ['1'] }] })], '[0].overrides[0].b: must be ≥ -1'],
    [
      'override id as a number',
      [user('a', { overrides: [{ b: 1, k: [1 as unknown as string] }] })],
      '[0].overrides[0].k[0]: must be a snowflake (a string of digits)',
    ],
    [
      'override id twice',
      [
        user('a', {
          overrides: [
            { b: 1, k: ['1'] },
            { b: 2, k: ['2', '1'] },
          ],
        }),
      ],
      '[0].overrides[1].k[1]: already in overrides[0]',
    ],
    ['duplicate name', [user('a'), user('a')], '[1].name: "a" is already [0]'],
    [
      'holdout unknown',
      [user('a', { holdout: { name: 'nope', bucket: 0 } })],
      '[0].holdout.name: no experiment named "nope" in the file',
    ],
    [
      'holdout self',
      [user('a', { holdout: { name: 'a', bucket: 0 } })],
      '[0].holdout.name: must name another experiment',
    ],
    [
      'holdout of another kind',
      [user('a', { holdout: { name: 'g', bucket: 0 } }), guild('g', {})],
      '[0].holdout.name: "g" is a guild experiment; the holdout of a user experiment must be a user experiment',
    ],
    [
      'holdout bucket None',
      [user('a', { holdout: { name: 'b', bucket: -1 } }), user('b')],
      '[0].holdout.bucket: must be ≥ 0',
    ],
    ['filter unknown', [guild('g', { guild_size: {} })], '[0].populations[0].filters.guild_size: unknown field'],
    [
      'feature list empty',
      [guild('g', { guild_has_feature: { guild_features: [] } })],
      '[0].populations[0].filters.guild_has_feature.guild_features: must not be empty',
    ],
    [
      'id range min above max',
      [guild('g', { guild_id_range: { min_id: '10', max_id: '9' } })],
      '[0].populations[0].filters.guild_id_range.min_id: must be ≤ max_id',
    ],
    [
      'id range bound as number',
      [guild('g', { guild_id_range: { min_id: 10 } })],
      '[0].populations[0].filters.guild_id_range.min_id: must be a snowflake (a string of digits)',
    ],
    [
      'age negative',
      [guild('g', { guild_age_range_days: { min_id: -1 } })],
      '[0].populations[0].filters.guild_age_range_days.min_id: must be ≥ 0',
    ],
    [
      'member count min above max',
      [guild('g', { guild_member_count_range: { min_id: 5, max_id: 4 } })],
      '[0].populations[0].filters.guild_member_count_range.min_id: must be ≤ max_id',
    ],
    [
      'guild ids',
      [guild('g', { guild_ids: { guild_ids: ['x'] } })],
      '[0].populations[0].filters.guild_ids.guild_ids[0]: must be a snowflake (a string of digits)',
    ],
    [
      'hub types',
      [guild('g', { guild_hub_types: { guild_hub_types: [256] } })],
      '[0].populations[0].filters.guild_hub_types.guild_hub_types[0]: must be ≤ 255',
    ],
    [
      'vanity',
      [guild('g', { guild_has_vanity_url: { guild_has_vanity_url: 'no' } })],
      '[0].populations[0].filters.guild_has_vanity_url.guild_has_vanity_url: must be true or false',
    ],
    [
      'hash range target past 10000',
      [guild('g', { guild_in_range_by_hash: { hash_key: 'k', target: 10001 } })],
      '[0].populations[0].filters.guild_in_range_by_hash.target: must be ≤ 10000',
    ],
    [
      'hash range key past 32 bits',
      [guild('g', { guild_in_range_by_hash: { hash_key: 2 ** 32, target: 1 } })],
      '[0].populations[0].filters.guild_in_range_by_hash.hash_key: must be ≤ 4294967295',
    ],
  ])('%s', (_, file, message) => {
    expect(problems(file)).toContain(message)
  })

  test('limits pass at their edge', () => {
    expect(
      problems([
        user('n'.repeat(128), { revision: 2 ** 31 - 1, overrides: [{ b: -1, k: ['18446744073709551615'] }] }),
        guild('g', {
          guild_id_range: { min_id: '5', max_id: '5' },
          guild_member_count_range: { min_id: 0, max_id: 0 },
          guild_hub_types: { guild_hub_types: [0, 255] },
          guild_in_range_by_hash: { hash_key: 2 ** 32 - 1, target: 10000 },
        }),
        {
          ...user('edges'),
          populations: [
            {
              ranges: [
                {
                  bucket: -1,
                  rollout: [
                    { s: 0, e: 0 },
                    { s: 9999, e: 9999 },
                  ],
                },
              ],
            },
          ],
        },
      ]),
    ).toEqual([])
  })

  test('holdout cycles are refused', () => {
    expect(
      problems([user('a', { holdout: { name: 'b', bucket: 1 } }), user('b', { holdout: { name: 'a', bucket: 1 } })]),
    ).toContain('[0].holdout.name: holdouts form a cycle: a → b → a')
  })

  test('every problem is reported, not only the first', () => {
    expect(problems([user('a', { revision: -1 }), { ...user('b'), kind: 'x' }])).toEqual([
      '[0].revision: must be ≥ 0',
      '[1].kind: must be "user" or "guild"',
    ])
  })

  test('a guild population that leaves positions uncovered loads with a warning', async () => {
    const result = await load([
      { ...guild('g-gap', {}), populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 100, e: 199 }] }] }] },
    ])
    expect(result.warnings).toEqual([
      expect.stringMatching(/^\[0\]\.populations\[0\]: positions 0-99, 200-9999 are in no range/),
    ])
  })
})

describe('load', () => {
  test('a bad file is refused whole and the loaded definitions stay', async () => {
    await load([user('kept-1'), user('kept-2')])
    const before = await listDefinitions()
    const fresh = await api('GET', '/experiments')
    await expect(load([user('new-1'), { ...user('new-2'), revision: -1 }])).rejects.toThrow('[1].revision: must be ≥ 0')
    expect(await listDefinitions()).toEqual(before)
    const again = await api('GET', '/experiments', { headers: { 'x-fingerprint': fresh.body.fingerprint } })
    expect(again.body.assignments.map((a: number[]) => a[0])).toEqual([mmh3('kept-1'), mmh3('kept-2')])
  })

  test('load replaces every definition', async () => {
    await load([user('old-1'), user('old-2')])
    await load([user('only')])
    expect((await listDefinitions()).map((d) => d.name)).toEqual(['only'])
    expect(await showDefinition('old-1')).toBeUndefined()
  })

  test('50 experiments round-trip through load, list and show', async () => {
    const file: Def[] = Array.from({ length: 50 }, (_, i) =>
      i % 2
        ? {
            name: `2025-${String((i % 12) + 1).padStart(2, '0')}_guild_${i}`,
            kind: 'guild',
            revision: i,
            ...(i % 3 === 0 ? { hash_key: `key_${i}` } : {}),
            populations: [
              {
                ranges: [
                  { bucket: i % 4, rollout: [{ s: 0, e: 4999 }] },
                  { bucket: -1, rollout: [{ s: 5000, e: 9999 }] },
                ],
                filters: { guild_member_count_range: { min_id: i, max_id: null } },
              },
            ],
            overrides: [{ b: 1, k: [String(1_000_000 + i)] }],
          }
        : {
            name: `2025-${String((i % 12) + 1).padStart(2, '0')}_user_${i}`,
            kind: 'user',
            revision: i,
            ...(i % 4 === 0 ? { aa_mode: true } : {}),
            ...(i % 6 === 0 ? { trigger_debugging: true } : {}),
            ...(i % 10 === 2 ? { platform: 'DEVELOPER_PORTAL' } : {}),
            ...(i >= 2 && i % 8 === 2 ? { holdout: { name: `2025-01_user_0`, bucket: 1 } } : {}),
            populations: [{ ranges: [{ bucket: 1, rollout: [{ s: 0, e: i * 100 }] }] }],
          },
    )
    const result = await load(file)
    expect(result).toMatchObject({ loaded: 50, warnings: [] })
    const list = await listDefinitions()
    expect(list).toHaveLength(50)
    for (const [i, row] of list.entries()) {
      const d = file[i]
      expect(row as Record<string, unknown>).toEqual({
        name: d.name,
        kind: d.kind,
        revision: d.revision,
        hash: mmh3(d.name),
        ...(d.hash_key ? { hash_key: d.hash_key } : {}),
        ...(d.platform ? { platform: d.platform } : {}),
        ...(d.holdout ? { holdout: d.holdout } : {}),
        aa_mode: d.aa_mode ?? false,
        trigger_debugging: d.trigger_debugging ?? false,
        populations: d.populations.length,
        overrides: d.overrides?.[0].k.length ?? 0,
      })
      expect((await showDefinition(d.name)) as unknown).toEqual(d)
    }
  })
})
