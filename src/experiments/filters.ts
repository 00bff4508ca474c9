// Server-experiment filters (spec §2.5, WIRE.md §4): validated from the definitions file, encoded for clients as
// Discord encodes them ([key hash, [[field hash, value], ...]] in a fixed order), and evaluated on the server by the
// same rules Discord's client applies to those arrays (ranges inclusive at both ends, any one feature suffices...).
import { snowflakeTime } from '../core/snowflake'
import { at, type Checker } from './check'
import { murmur3, POSITIONS } from './murmur'

/** The filters in the order they are encoded. */
const FILTER_NAMES = [
  'guild_has_feature',
  'guild_id_range',
  'guild_age_range_days',
  'guild_member_count_range',
  'guild_ids',
  'guild_hub_types',
  'guild_has_vanity_url',
  'guild_in_range_by_hash',
] as const
export type FilterName = (typeof FILTER_NAMES)[number]

type Bound = number | null | undefined
type IdBound = string | null | undefined

export type Filters = {
  guild_has_feature?: { guild_features: string[] }
  guild_id_range?: { min_id?: IdBound; max_id?: IdBound }
  guild_age_range_days?: { min_id?: Bound; max_id?: Bound }
  guild_member_count_range?: { min_id?: Bound; max_id?: Bound }
  guild_ids?: { guild_ids: string[] }
  guild_hub_types?: { guild_hub_types: number[] }
  guild_has_vanity_url?: { guild_has_vanity_url: boolean }
  /** hash_key: a string (its murmur3 is used) or the unsigned 32-bit hash itself. */
  guild_in_range_by_hash?: { hash_key: string | number; target: number }
}

/** A server as the filters see it. */
export type GuildFacts = {
  id: string
  features: string[]
  memberCount: number | null
  vanityUrlCode: string | null
  hubType: number | null
}
export type Predicate = (guild: GuildFacts, now: number) => boolean

/** The key hashes: murmur3 of each filter and field name. */
export const KEY = Object.fromEntries(
  [...FILTER_NAMES, 'guild_features', 'min_id', 'max_id', 'hash_key', 'target'].map((name) => [name, murmur3(name)]),
) as Record<FilterName | 'guild_features' | 'min_id' | 'max_id' | 'hash_key' | 'target', number>

const DAY_MS = 86_400_000
const U32_MAX = 2 ** 32 - 1
const COUNT_MAX = 2 ** 31 - 1

export type WireFilter = [number, [number, unknown][]]

/** Check the `filters` object of a guild population. */
export function checkFilters(check: Checker, path: string, value: unknown): void {
  const f = check.object(path, value, FILTER_NAMES)
  if (!f) return
  const range = (
    name: FilterName,
    bound: (p: string, v: unknown) => string | number | undefined,
    compare: (a: string | number, b: string | number) => boolean,
  ) => {
    if (f[name] === undefined) return
    const p = at(path, name)
    const r = check.object(p, f[name], ['min_id', 'max_id'])
    if (!r) return
    const min = r.min_id == null ? undefined : bound(at(p, 'min_id'), r.min_id)
    const max = r.max_id == null ? undefined : bound(at(p, 'max_id'), r.max_id)
    if (min !== undefined && max !== undefined && !compare(min, max)) check.fail(at(p, 'min_id'), 'must be ≤ max_id')
  }
  const list = <T>(name: FilterName, field: string, item: (p: string, v: unknown) => T | undefined) => {
    if (f[name] === undefined) return
    const p = at(path, name)
    const o = check.object(p, f[name], [field])
    const items = o && check.array(at(p, field), o[field])
    if (items && items.length === 0) check.fail(at(p, field), 'must not be empty')
    items?.forEach((v, i) => item(at(at(p, field), i), v))
  }
  list('guild_has_feature', 'guild_features', (p, v) => check.string(p, v, 64))
  range(
    'guild_id_range',
    (p, v) => check.snowflake(p, v),
    (a, b) => BigInt(a) <= BigInt(b),
  )
  range(
    'guild_age_range_days',
    (p, v) => check.int(p, v, 0, COUNT_MAX),
    (a, b) => a <= b,
  )
  range(
    'guild_member_count_range',
    (p, v) => check.int(p, v, 0, COUNT_MAX),
    (a, b) => a <= b,
  )
  list('guild_ids', 'guild_ids', (p, v) => check.snowflake(p, v))
  list('guild_hub_types', 'guild_hub_types', (p, v) => check.int(p, v, 0, 255))
  if (f.guild_has_vanity_url !== undefined) {
    const p = at(path, 'guild_has_vanity_url')
    const o = check.object(p, f.guild_has_vanity_url, ['guild_has_vanity_url'])
    if (o) check.bool(at(p, 'guild_has_vanity_url'), o.guild_has_vanity_url)
  }
  if (f.guild_in_range_by_hash !== undefined) {
    const p = at(path, 'guild_in_range_by_hash')
    const o = check.object(p, f.guild_in_range_by_hash, ['hash_key', 'target'])
    if (o) {
      if (typeof o.hash_key === 'string') check.key(at(p, 'hash_key'), o.hash_key)
      else if (typeof o.hash_key === 'number') check.int(at(p, 'hash_key'), o.hash_key, 0, U32_MAX)
      else check.fail(at(p, 'hash_key'), 'must be a string or an unsigned 32-bit integer')
      check.int(at(p, 'target'), o.target, 0, POSITIONS)
    }
  }
}

const hashKeyOf = (value: string | number) => (typeof value === 'number' ? value : murmur3(value))

const inRange = <T extends bigint | number>(value: T, min: T | undefined, max: T | undefined) =>
  !(min !== undefined && value < min) && !(max !== undefined && value > max)

/** Age in whole days from the ID's timestamp (spec §2.5), as Discord's client counts it. */
function guildAgeDays(id: string, now: number): number {
  return Math.floor((now - snowflakeTime(id)) / DAY_MS)
}

/** Position for `guild_in_range_by_hash`, doubled when positive exactly as Discord's client does. */
export function rangeByHashPosition(hashKey: number, guildId: string): number {
  const h = murmur3(`${hashKey}:${guildId}`)
  return (h > 0 ? h + h : h) % POSITIONS
}

const num = (v: Bound) => (v == null ? undefined : v)
const big = (v: IdBound) => (v == null ? undefined : BigInt(v))

/** The encoded array and the predicate of each filter present, in the fixed order. */
export function compileFilters(filters: Filters | undefined): { wire: WireFilter[]; predicates: Predicate[] } {
  const wire: WireFilter[] = []
  const predicates: Predicate[] = []
  if (!filters) return { wire, predicates }
  const f = filters
  if (f.guild_has_feature) {
    const wanted = f.guild_has_feature.guild_features
    wire.push([KEY.guild_has_feature, [[KEY.guild_features, wanted]]])
    predicates.push((g) => wanted.some((feature) => g.features.includes(feature)))
  }
  if (f.guild_id_range) {
    const { min_id, max_id } = f.guild_id_range
    wire.push([
      KEY.guild_id_range,
      [
        [KEY.min_id, min_id ?? null],
        [KEY.max_id, max_id ?? null],
      ],
    ])
    const min = big(min_id)
    const max = big(max_id)
    predicates.push((g) => inRange(BigInt(g.id), min, max))
  }
  if (f.guild_age_range_days) {
    const { min_id, max_id } = f.guild_age_range_days
    wire.push([
      KEY.guild_age_range_days,
      [
        [KEY.min_id, min_id ?? null],
        [KEY.max_id, max_id ?? null],
      ],
    ])
    predicates.push((g, now) => inRange(guildAgeDays(g.id, now), num(min_id), num(max_id)))
  }
  if (f.guild_member_count_range) {
    const { min_id, max_id } = f.guild_member_count_range
    wire.push([
      KEY.guild_member_count_range,
      [
        [KEY.min_id, min_id ?? null],
        [KEY.max_id, max_id ?? null],
      ],
    ])
    predicates.push((g) => g.memberCount !== null && inRange(g.memberCount, num(min_id), num(max_id)))
  }
  if (f.guild_ids) {
    const ids = new Set(f.guild_ids.guild_ids)
    wire.push([KEY.guild_ids, [[KEY.guild_ids, f.guild_ids.guild_ids]]])
    predicates.push((g) => ids.has(g.id))
  }
  if (f.guild_hub_types) {
    const types = new Set(f.guild_hub_types.guild_hub_types)
    wire.push([KEY.guild_hub_types, [[KEY.guild_hub_types, f.guild_hub_types.guild_hub_types]]])
    predicates.push((g) => g.hubType !== null && types.has(g.hubType))
  }
  if (f.guild_has_vanity_url) {
    const wanted = f.guild_has_vanity_url.guild_has_vanity_url
    wire.push([KEY.guild_has_vanity_url, [[KEY.guild_has_vanity_url, wanted]]])
    predicates.push((g) => wanted === (g.vanityUrlCode != null))
  }
  if (f.guild_in_range_by_hash) {
    const hashKey = hashKeyOf(f.guild_in_range_by_hash.hash_key)
    const target = f.guild_in_range_by_hash.target
    wire.push([
      KEY.guild_in_range_by_hash,
      [
        [KEY.hash_key, hashKey],
        [KEY.target, target],
      ],
    ])
    predicates.push((g) => rangeByHashPosition(hashKey, g.id) < target)
  }
  return { wire, predicates }
}
