// Known answers for the hash (Murmur3 x86 32-bit, seed 0, unsigned) and for every key hash in WIRE.md §4.
import { describe, expect, test } from 'bun:test'
import murmurhash from 'murmurhash-js'
import { KEY } from '../../src/experiments/filters'
import { murmur3, rolloutPosition } from '../../src/experiments/murmur'
import { prng } from './helpers'

describe('murmur3', () => {
  test('published test vectors (SMHasher x86_32)', () => {
    // Seed 0 through the production function; other seeds through the package it wraps.
    expect(murmur3('')).toBe(0)
    expect(murmur3('test')).toBe(0xba6bd213)
    expect(murmur3('Hello, world!')).toBe(0xc0363e43)
    expect(murmur3('The quick brown fox jumps over the lazy dog')).toBe(0x2e4ff723)
    expect(murmurhash.murmur3('', 1)).toBe(0x514e28b7)
    expect(murmurhash.murmur3('', 0xffffffff)).toBe(0x81f16f39)
    expect(murmurhash.murmur3('a', 0x9747b28c)).toBe(0x7fa09ea6)
    expect(murmurhash.murmur3('aa', 0x9747b28c)).toBe(0x5d211726)
    expect(murmurhash.murmur3('aaa', 0x9747b28c)).toBe(0x283e0130)
    expect(murmurhash.murmur3('aaaa', 0x9747b28c)).toBe(0x5a97808a)
    expect(murmurhash.murmur3('abc', 0x9747b28c)).toBe(0xc84a62dd)
    expect(murmurhash.murmur3('abcd', 0x9747b28c)).toBe(0xf0478627)
    expect(murmurhash.murmur3('Hello, world!', 0x9747b28c)).toBe(0x24884cba)
  })

  test('unsigned: hashes with the top bit set stay positive', () => {
    expect(murmur3('test')).toBeGreaterThan(2 ** 31)
  })

  test('experiment name hashes from WIRE.md §4', () => {
    expect(murmur3('2021-06_guild_role_subscriptions')).toBe(1405831955)
    expect(murmur3('2023-02_stage_boosting')).toBe(1816004721)
  })

  test('every filter key hash of WIRE.md §4', () => {
    expect(KEY).toEqual({
      guild_has_feature: 1604612045,
      guild_id_range: 2404720969,
      guild_age_range_days: 3730341874,
      guild_member_count_range: 2918402255,
      guild_ids: 3013771838,
      guild_hub_types: 4148745523,
      guild_has_vanity_url: 188952590,
      guild_in_range_by_hash: 2294888943,
      guild_features: 1183251248,
      min_id: 3399957344,
      max_id: 1238858341,
      hash_key: 2690752156,
      target: 1982804121,
    })
  })

  test('agrees with an independent implementation (Bun.hash.murmur32v3) on ASCII keys of every length 0-40', () => {
    const rand = prng(7)
    for (let length = 0; length <= 40; length++) {
      for (let n = 0; n < 25; n++) {
        const key = Array.from({ length }, () => String.fromCharCode(0x21 + Math.floor(rand() * 94))).join('')
        expect(murmur3(key)).toBe(Bun.hash.murmur32v3(key, 0))
      }
    }
  })

  test('rollout position is murmur3("<key>:<id>") % 10000', () => {
    expect(rolloutPosition('2021-06_guild_role_subscriptions', '1084179945133187083')).toBe(
      Bun.hash.murmur32v3('2021-06_guild_role_subscriptions:1084179945133187083', 0) % 10000,
    )
    for (const id of ['0', '1', '18446744073709551615']) {
      const p = rolloutPosition('x', id)
      expect(p).toBeGreaterThanOrEqual(0)
      expect(p).toBeLessThanOrEqual(9999)
    }
  })
})
