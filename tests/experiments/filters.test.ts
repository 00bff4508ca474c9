// Server experiments: the arrays as Discord encodes them (key hashes, nested pairs, exclusive rollout ends), every
// filter at its edges, and agreement with a client-side evaluation of those arrays written here after Discord's
// client (exclusive ends, key hashes looked up by number, range-by-hash doubling).
import { beforeEach, describe, expect, setSystemTime, test } from 'bun:test'
import { compileAll, evaluate } from '../../src/experiments/bucketing'
import type { Definition } from '../../src/experiments/definitions'
import type { GuildFacts } from '../../src/experiments/filters'
import { rangeByHashPosition } from '../../src/experiments/filters'
import { experimentSet } from '../../src/experiments/registry'
import { evaluateOne, guildExperimentArrays } from '../../src/experiments/service'
import { clock } from '../../src/core/clock'
import { snowflakeAt, snowflakeTime } from '../../src/core/snowflake'
import { setGuildAttributes } from '../../src/guilds/public'
import { resetWorld } from '../helpers'
import { makeGuild, join } from '../guilds/helpers'
import { load, mmh3, prng, randomRanges, type Def } from './helpers'

beforeEach(resetWorld)

const DAY = 86_400_000
const ALL = [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }]

function facts(over: Partial<GuildFacts> = {}): GuildFacts {
  return { id: '1084179945133187083', features: [], memberCount: 10, vanityUrlCode: null, hubType: null, ...over }
}

/** The bucket a single-population guild experiment with these filters gives (1 when they hold, -1 otherwise). */
function bucket(filters: Record<string, unknown>, guild: GuildFacts, now = Date.now()): number {
  const [exp] = compileAll([
    { name: 'edge', kind: 'guild', revision: 1, populations: [{ ranges: ALL, filters }] } as Definition,
  ])
  return evaluate(exp, guild.id, guild, now).bucket
}

describe('encoding', () => {
  test("every filter, in the fixed order, with Discord's key hashes and nested pairs", async () => {
    await load([
      { name: 'g-holdout', kind: 'guild', revision: 1, populations: [{ ranges: ALL }] },
      {
        name: '2025-02_servers',
        kind: 'guild',
        revision: 4,
        hash_key: 'srv',
        trigger_debugging: true,
        holdout: { name: 'g-holdout', bucket: 1 },
        populations: [
          {
            ranges: [
              { bucket: 1, rollout: [{ s: 0, e: 4999 }] },
              { bucket: -1, rollout: [{ s: 5000, e: 9999 }] },
            ],
            // Written out of order: the encoding puts them in the fixed order.
            filters: {
              guild_in_range_by_hash: { hash_key: 'srv', target: 5000 },
              guild_has_vanity_url: { guild_has_vanity_url: true },
              guild_hub_types: { guild_hub_types: [1] },
              guild_ids: { guild_ids: ['1', '2'] },
              guild_member_count_range: { min_id: 2, max_id: 1000 },
              guild_age_range_days: { max_id: 30 },
              guild_id_range: { min_id: '100' },
              guild_has_feature: { guild_features: ['COMMUNITY', 'NEWS'] },
            },
          },
        ],
        overrides: [{ b: 2, k: ['111', '112'] }],
      },
    ])
    expect(await guildExperimentArrays()).toEqual([
      [mmh3('g-holdout'), 'g-holdout', 1, [[[[1, [{ s: 0, e: 10000 }]]], []]], [], [], null, null, 0, 0],
      [
        3308995832,
        'srv',
        4,
        [
          [
            [
              [1, [{ s: 0, e: 5000 }]],
              [-1, [{ s: 5000, e: 10000 }]],
            ],
            [
              [1604612045, [[1183251248, ['COMMUNITY', 'NEWS']]]],
              [
                2404720969,
                [
                  [3399957344, '100'],
                  [1238858341, null],
                ],
              ],
              [
                3730341874,
                [
                  [3399957344, null],
                  [1238858341, 30],
                ],
              ],
              [
                2918402255,
                [
                  [3399957344, 2],
                  [1238858341, 1000],
                ],
              ],
              [3013771838, [[3013771838, ['1', '2']]]],
              [4148745523, [[4148745523, [1]]]],
              [188952590, [[188952590, true]]],
              [
                2294888943,
                [
                  [2690752156, 3842050582],
                  [1982804121, 5000],
                ],
              ],
            ],
          ],
        ],
        [{ b: 2, k: ['111', '112'] }],
        [],
        'g-holdout',
        1,
        0,
        1,
      ],
    ])
  })

  test('the population of the published example (2021-06_guild_role_subscriptions) encodes as published', async () => {
    await load([
      {
        name: '2021-06_guild_role_subscriptions',
        kind: 'guild',
        revision: 0,
        populations: [
          {
            ranges: [
              { bucket: -1, rollout: [{ s: 7200, e: 9999 }] },
              { bucket: 1, rollout: [{ s: 0, e: 7199 }] },
            ],
            filters: { guild_in_range_by_hash: { hash_key: 1405831955, target: 10000 } },
          },
        ],
      },
    ])
    const [array] = await guildExperimentArrays()
    expect(array.slice(0, 3)).toEqual([1405831955, '2021-06_guild_role_subscriptions', 0])
    expect(array[3]).toEqual([
      [
        [
          [-1, [{ s: 7200, e: 10000 }]],
          [1, [{ s: 0, e: 7200 }]],
        ],
        [
          [
            2294888943,
            [
              [2690752156, 1405831955],
              [1982804121, 10000],
            ],
          ],
        ],
      ],
    ])
    expect(array.slice(4)).toEqual([[], [], null, null, 0, 0])
  })

  test('platform-tagged server experiments are left out unless asked for', async () => {
    await load([
      { name: 'plain', kind: 'guild', revision: 1, populations: [] },
      { name: 'portal', kind: 'guild', revision: 1, platform: 'DEVELOPER_PORTAL', populations: [] },
    ])
    expect((await guildExperimentArrays()).map((a) => a[1])).toEqual(['plain'])
    expect((await guildExperimentArrays('DEVELOPER_PORTAL')).map((a) => a[1])).toEqual(['plain', 'portal'])
  })
})

describe('filters at their edges', () => {
  test('has feature: any one listed feature suffices', () => {
    const f = { guild_has_feature: { guild_features: ['A', 'B'] } }
    expect(bucket(f, facts({ features: ['B'] }))).toBe(1)
    expect(bucket(f, facts({ features: ['C', 'A'] }))).toBe(1)
    expect(bucket(f, facts({ features: ['C'] }))).toBe(-1)
    expect(bucket(f, facts({ features: [] }))).toBe(-1)
  })

  test('ID range: inclusive, compared as 64-bit integers', () => {
    const f = { guild_id_range: { min_id: '1084179945133187083', max_id: '1084179945133187090' } }
    expect(bucket(f, facts({ id: '1084179945133187082' }))).toBe(-1)
    expect(bucket(f, facts({ id: '1084179945133187083' }))).toBe(1)
    expect(bucket(f, facts({ id: '1084179945133187090' }))).toBe(1)
    expect(bucket(f, facts({ id: '1084179945133187091' }))).toBe(-1)
    expect(bucket({ guild_id_range: { min_id: '100' } }, facts({ id: '99' }))).toBe(-1)
    expect(bucket({ guild_id_range: { min_id: '100' } }, facts({ id: '18446744073709551615' }))).toBe(1)
    expect(bucket({ guild_id_range: { max_id: '100' } }, facts({ id: '0' }))).toBe(1)
  })

  test("age in whole days from the ID's timestamp", () => {
    const now = Date.UTC(2026, 0, 31, 12)
    const id = snowflakeAt(now - 30 * DAY)
    const atMost30 = { guild_age_range_days: { max_id: 30 } }
    const atLeast30 = { guild_age_range_days: { min_id: 30 } }
    expect(bucket(atMost30, facts({ id }), now)).toBe(1)
    expect(bucket(atLeast30, facts({ id }), now)).toBe(1)
    expect(bucket(atLeast30, facts({ id }), now - 1)).toBe(-1) // 29.99… days
    expect(bucket(atMost30, facts({ id }), now + DAY - 1)).toBe(1) // 30.99… days
    expect(bucket(atMost30, facts({ id }), now + DAY)).toBe(-1)
    expect(bucket({ guild_age_range_days: { min_id: 31 } }, facts({ id }), now + DAY)).toBe(1)
  })

  test('member count range: inclusive; an unknown count never matches', () => {
    const f = { guild_member_count_range: { min_id: 2, max_id: 3 } }
    expect([1, 2, 3, 4].map((memberCount) => bucket(f, facts({ memberCount })))).toEqual([-1, 1, 1, -1])
    expect(bucket(f, facts({ memberCount: null }))).toBe(-1)
    expect(bucket({ guild_member_count_range: { min_id: 0 } }, facts({ memberCount: 0 }))).toBe(1)
  })

  test('ID list', () => {
    const f = { guild_ids: { guild_ids: ['5', '1084179945133187083'] } }
    expect(bucket(f, facts())).toBe(1)
    expect(bucket(f, facts({ id: '1084179945133187084' }))).toBe(-1)
  })

  test('hub types: the server must be a hub of a listed type', () => {
    const f = { guild_hub_types: { guild_hub_types: [1, 2] } }
    expect([0, 1, 2, 3].map((hubType) => bucket(f, facts({ hubType })))).toEqual([-1, 1, 1, -1])
    expect(bucket(f, facts({ hubType: null }))).toBe(-1)
    expect(bucket({ guild_hub_types: { guild_hub_types: [0] } }, facts({ hubType: 0 }))).toBe(1)
  })

  test('has vanity URL, both ways', () => {
    expect(bucket({ guild_has_vanity_url: { guild_has_vanity_url: true } }, facts({ vanityUrlCode: 'cool' }))).toBe(1)
    expect(bucket({ guild_has_vanity_url: { guild_has_vanity_url: true } }, facts())).toBe(-1)
    expect(bucket({ guild_has_vanity_url: { guild_has_vanity_url: false } }, facts())).toBe(1)
    expect(bucket({ guild_has_vanity_url: { guild_has_vanity_url: false } }, facts({ vanityUrlCode: 'cool' }))).toBe(-1)
  })

  test('in range by hash: (doubled hash) % 10000 must be below the target', () => {
    const key = mmh3('some_key')
    for (const id of ['1', '1084179945133187083', '981234567890123456']) {
      const h = Bun.hash.murmur32v3(`${key}:${id}`, 0)
      const q = (h > 0 ? h + h : h) % 10000
      expect(rangeByHashPosition(key, id)).toBe(q)
      expect(bucket({ guild_in_range_by_hash: { hash_key: 'some_key', target: q } }, facts({ id }))).toBe(-1)
      expect(bucket({ guild_in_range_by_hash: { hash_key: 'some_key', target: q + 1 } }, facts({ id }))).toBe(1)
      expect(bucket({ guild_in_range_by_hash: { hash_key: key, target: q + 1 } }, facts({ id }))).toBe(1)
    }
    expect(bucket({ guild_in_range_by_hash: { hash_key: 'k', target: 0 } }, facts())).toBe(-1)
    expect(bucket({ guild_in_range_by_hash: { hash_key: 'k', target: 10000 } }, facts())).toBe(1)
  })

  test('all filters of a population must hold; otherwise the next population is tried', () => {
    const [exp] = compileAll([
      {
        name: 'two',
        kind: 'guild',
        revision: 1,
        populations: [
          {
            ranges: [{ bucket: 1, rollout: [{ s: 0, e: 9999 }] }],
            filters: { guild_has_feature: { guild_features: ['A'] }, guild_member_count_range: { min_id: 5 } },
          },
          { ranges: [{ bucket: 2, rollout: [{ s: 0, e: 9999 }] }] },
        ],
      },
    ])
    const now = Date.now()
    expect(evaluate(exp, '9', facts({ id: '9', features: ['A'], memberCount: 5 }), now)).toMatchObject({
      bucket: 1,
      population: 0,
    })
    expect(evaluate(exp, '9', facts({ id: '9', features: ['A'], memberCount: 4 }), now)).toMatchObject({
      bucket: 2,
      population: 1,
    })
    expect(evaluate(exp, '9', facts({ id: '9', features: [], memberCount: 50 }), now)).toMatchObject({
      bucket: 2,
      population: 1,
    })
  })
})

describe('server-side evaluation of real servers (server experiments eval)', () => {
  test('features, vanity, hub type and member count come from the server; age from its ID and the clock', async () => {
    const { guild, owner, channelId } = await makeGuild()
    await load([
      {
        name: 'real',
        kind: 'guild',
        revision: 1,
        populations: [
          {
            ranges: ALL,
            filters: {
              guild_has_feature: { guild_features: ['COMMUNITY'] },
              guild_has_vanity_url: { guild_has_vanity_url: true },
              guild_hub_types: { guild_hub_types: [2] },
              guild_member_count_range: { min_id: 2 },
              guild_age_range_days: { max_id: 3 },
            },
          },
        ],
      },
    ])
    const position = mmh3(`real:${guild.id}`) % 10000
    expect(await evaluateOne('real', { guild: guild.id })).toEqual({
      experiment: 'real',
      kind: 'guild',
      resource_id: guild.id,
      bucket: -1,
      population: -1,
      position,
      override: false,
    })
    await setGuildAttributes(guild.id, { features: ['COMMUNITY'], vanity: `v${guild.id}`, hubType: 2 })
    expect((await evaluateOne('real', { guild: guild.id })).bucket).toBe(-1) // one member
    await join(channelId, owner)
    expect(await evaluateOne('real', { guild: guild.id })).toMatchObject({ bucket: 1, population: 0, position })
    // The ID's time, not the clock at creation (IDs never go backwards when other tests moved the clock).
    // Date.now() held still, so that no real millisecond passes between setting the age and reading it.
    setSystemTime(new Date(Date.now()))
    try {
      clock.advance(snowflakeTime(guild.id) + 4 * DAY - 1 - clock.now())
      expect(await evaluateOne('real', { guild: guild.id })).toMatchObject({ bucket: 1 })
      clock.advance(1)
      expect(await evaluateOne('real', { guild: guild.id })).toMatchObject({ bucket: -1, population: -1 })
    } finally {
      setSystemTime()
    }
  })
})

// ---- A client-side evaluation of the encoded arrays, after Discord's web client ----

type Wire = any[]
const FILTER = {
  feature: 1604612045,
  idRange: 2404720969,
  age: 3730341874,
  members: 2918402255,
  ids: 3013771838,
  hubs: 4148745523,
  vanity: 188952590,
  byHash: 2294888943,
}
const FIELD = { min: 3399957344, max: 1238858341, hashKey: 2690752156, target: 1982804121 }

function clientFilter(key: number, fields: [number, any][], now: number): (g: GuildFacts) => boolean {
  const field = (k: number) => fields.find(([f]) => f === k)?.[1]
  const within = (v: bigint, min: any, max: any) =>
    !(min != null && v < BigInt(min)) && !(max != null && v > BigInt(max))
  switch (key) {
    case FILTER.ids:
      return (g) => field(FILTER.ids).includes(g.id)
    case FILTER.idRange:
      return (g) => within(BigInt(g.id), field(FIELD.min), field(FIELD.max))
    case FILTER.age:
      return (g) =>
        within(
          BigInt(Math.floor((now - Number((BigInt(g.id) >> 22n) + 1420070400000n)) / DAY)),
          field(FIELD.min),
          field(FIELD.max),
        )
    case FILTER.members:
      return (g) => g.memberCount != null && within(BigInt(g.memberCount), field(FIELD.min), field(FIELD.max))
    case FILTER.feature:
      return (g) => fields[0][1].some((f: string) => g.features.includes(f))
    case FILTER.hubs:
      return (g) => typeof g.hubType === 'number' && fields[0][1].some((t: number) => t === g.hubType)
    case FILTER.vanity:
      return (g) => fields[0][1] === (g.vanityUrlCode != null)
    case FILTER.byHash:
      return (g) => {
        const r = mmh3(`${field(FIELD.hashKey)}:${g.id}`)
        return (r > 0 ? r + r : r >>> 0) % 1e4 < parseInt(field(FIELD.target))
      }
  }
  throw new Error(`unknown filter ${key}`)
}

function clientPopulations(populations: Wire, g: GuildFacts, position: number, now: number): number | null {
  for (const [ranges, filters] of populations) {
    if (!filters.every(([key, fields]: [number, any]) => clientFilter(key, fields, now)(g))) continue
    const range = ranges.find(([, rollout]: [number, { s: number; e: number }[]]) =>
      rollout.some(({ s, e }) => position >= s && position < e),
    )
    const b = range ? range[0] : 0
    if (b === -1) break
    return b
  }
  return null
}

function clientEvaluate(
  byHash: Map<number, Wire>,
  name: string,
  g: GuildFacts,
  now: number,
): { bucket: number; override?: boolean; aaMode?: boolean } | null {
  const e = byHash.get(mmh3(name))
  if (!e) return null
  const [, hashKey, , populations, overrides, , holdoutName, holdoutBucket, aaMode] = e
  const o = overrides.find((x: { b: number; k: string[] }) => x.k.includes(g.id))
  if (o) return o.b === -1 ? null : { bucket: o.b, override: true }
  const position = mmh3(`${hashKey ?? name}:${g.id}`) % 10000
  const b = clientPopulations(populations, g, position, now)
  if (b === null) return null
  if (holdoutName != null && holdoutBucket != null && holdoutName !== name) {
    const f = clientEvaluate(byHash, holdoutName, g, now)
    if (f?.bucket != null && f.bucket === holdoutBucket) return null
  }
  return { bucket: b, aaMode: aaMode === 1 }
}

describe("the encoded arrays, evaluated as Discord's client does, agree with the server", () => {
  test('300 random servers × 30 random server experiments whose populations cover every position', async () => {
    const rand = prng(2026)
    const now = Date.now()
    const pick = <T>(list: T[]) => list.filter(() => rand() < 0.5)
    const guilds: GuildFacts[] = Array.from({ length: 300 }, () => ({
      id: snowflakeAt(Date.UTC(2015, 1) + Math.floor(rand() * (now - Date.UTC(2015, 1)))),
      features: pick(['A', 'B', 'C']),
      memberCount: rand() < 0.1 ? null : Math.floor(rand() * 20),
      vanityUrlCode: rand() < 0.5 ? 'v' : null,
      hubType: rand() < 0.5 ? null : Math.floor(rand() * 4),
    }))
    const ids = guilds.map((g) => g.id).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
    const randomFilters = () => {
      const f: Record<string, unknown> = {}
      const lo = Math.floor(rand() * 10)
      if (rand() < 0.3) f.guild_has_feature = { guild_features: ['A', 'B', 'C'].filter(() => rand() < 0.5).concat('Z') }
      if (rand() < 0.3)
        f.guild_id_range = {
          min_id: rand() < 0.7 ? ids[Math.floor(rand() * 150)] : null,
          max_id: rand() < 0.7 ? ids[150 + Math.floor(rand() * 150)] : null,
        }
      if (rand() < 0.3)
        f.guild_age_range_days = {
          min_id: rand() < 0.5 ? Math.floor(rand() * 1500) : null,
          max_id: rand() < 0.5 ? 1500 + Math.floor(rand() * 2000) : null,
        }
      if (rand() < 0.3)
        f.guild_member_count_range = { min_id: lo, max_id: rand() < 0.5 ? lo + Math.floor(rand() * 10) : null }
      if (rand() < 0.1) f.guild_ids = { guild_ids: ids.filter(() => rand() < 0.3) }
      if (rand() < 0.2) f.guild_hub_types = { guild_hub_types: [0, 1, 2, 3].filter(() => rand() < 0.5).concat(9) }
      if (rand() < 0.2) f.guild_has_vanity_url = { guild_has_vanity_url: rand() < 0.5 }
      if (rand() < 0.3)
        f.guild_in_range_by_hash = {
          hash_key: rand() < 0.5 ? `k${Math.floor(rand() * 100)}` : Math.floor(rand() * 2 ** 32),
          target: Math.floor(rand() * 10001),
        }
      return f
    }
    const defs: Def[] = []
    for (let i = 0; i < 30; i++) {
      const d: Def = {
        name: `2025-07_server_${i}`,
        kind: 'guild',
        revision: i,
        populations: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => ({
          ranges: randomRanges(rand, 1 + Math.floor(rand() * 4)),
          filters: randomFilters(),
        })),
      }
      if (rand() < 0.3) d.hash_key = `hk${i}`
      if (rand() < 0.2) d.aa_mode = true
      if (rand() < 0.3) d.overrides = [{ b: Math.floor(rand() * 4) - 1, k: ids.filter(() => rand() < 0.05) }]
      if (i > 0 && rand() < 0.4) d.holdout = { name: defs[Math.floor(rand() * i)].name, bucket: Math.floor(rand() * 4) }
      defs.push(d)
    }
    expect((await load(defs)).warnings).toEqual([])
    const byHash = new Map((await guildExperimentArrays()).map((a) => [a[0] as number, a as Wire]))
    const set = await experimentSet()
    const seen = new Set<number>()
    for (const g of guilds) {
      for (const d of defs) {
        const server = evaluate(set.byName.get(d.name)!, g.id, g, now)
        const client = clientEvaluate(byHash, d.name, g, now)
        const expected = client === null || (client.aaMode && !client.override) ? -1 : client.bucket
        expect(server.bucket).toBe(expected)
        seen.add(server.bucket)
      }
    }
    expect([...seen].sort()).toEqual([-1, 0, 1, 2, 3])
  })
})
