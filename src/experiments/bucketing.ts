// Definitions compiled for evaluation, and the evaluation itself (spec §2.5): overrides first; otherwise the first
// population whose filters all hold and one of whose ranges holds the rollout position; A/A mode answers None (-1)
// unless overridden; a holdout experiment with the resource in its named bucket disables the experiment.
import type { Definition, Platform } from './definitions'
import { compileFilters, type GuildFacts, type Predicate, type WireFilter } from './filters'
import { murmur3, rolloutPosition } from './murmur'

export type CompiledPopulation = {
  ranges: { bucket: number; spans: [number, number][] }[]
  predicates: Predicate[]
  wire: WireFilter[]
}

export type Compiled = {
  definition: Definition
  name: string
  kind: 'user' | 'guild'
  hash: number
  revision: number
  /** What positions hash: hash_key, or the name. */
  hashKey: string
  aaMode: boolean
  triggerDebugging: boolean
  platform?: Platform
  holdout?: { name: string; bucket: number; experiment: Compiled }
  overrides: Map<string, number>
  populations: CompiledPopulation[]
}

export type Assignment = {
  /** The bucket the resource gets (-1 = None). */
  bucket: number
  /** The bucket before A/A mode hides it (-1 when none, or held out): what a holdout compares. */
  assigned: number
  override: boolean
  /** Index of the population that gave the bucket; -1 when none did or an override decided. */
  population: number
  position: number
  holdout?: { name: string; revision: number; bucket: number }
}

/** Position 0 or greater, and the resource's facts when the experiment is about servers. */
export function evaluate(exp: Compiled, resourceId: string, guild: GuildFacts | undefined, now: number): Assignment {
  const position = rolloutPosition(exp.hashKey, resourceId)
  const overridden = exp.overrides.get(resourceId)
  if (overridden !== undefined)
    return { bucket: overridden, assigned: overridden, override: true, population: -1, position }
  let population = -1
  let assigned = -1
  for (let i = 0; i < exp.populations.length && population === -1; i++) {
    const p = exp.populations[i]
    if (p.predicates.length && !(guild && allHold(p.predicates, guild, now))) continue
    const range = rangeAt(p.ranges, position)
    if (range) {
      population = i
      assigned = range.bucket
    }
  }
  let holdout: Assignment['holdout']
  if (assigned !== -1 && exp.holdout) {
    const other = evaluate(exp.holdout.experiment, resourceId, guild, now)
    if (other.assigned !== -1 && other.assigned === exp.holdout.bucket) {
      holdout = { name: exp.holdout.name, revision: exp.holdout.experiment.revision, bucket: other.assigned }
      assigned = -1
    }
  }
  const a: Assignment = { bucket: exp.aaMode ? -1 : assigned, assigned, override: false, population, position }
  if (holdout) a.holdout = holdout
  return a
}

// Plain loops, not closures: READY evaluates every user experiment for each session it starts, and a closure per
// population and range was most of what an Identify allocated (measured, bench/RESULTS.md issue 26).
function allHold(predicates: Predicate[], guild: GuildFacts, now: number): boolean {
  for (const holds of predicates) if (!holds(guild, now)) return false
  return true
}

/** The first range one of whose spans holds the position. */
function rangeAt(ranges: CompiledPopulation['ranges'], position: number) {
  for (const range of ranges) for (const [s, e] of range.spans) if (s <= position && position <= e) return range
  return undefined
}

export type UserExperimentArray = (number | string)[]
export type GuildExperimentArray = unknown[]

/** The user experiment array of spec §2.5: fields 9-11 only when a holdout disabled the experiment. */
export function userArray(exp: Compiled, a: Assignment): UserExperimentArray {
  const array: UserExperimentArray = [
    exp.hash,
    exp.revision,
    a.bucket,
    a.override ? 0 : -1,
    a.population,
    a.position,
    exp.aaMode ? 1 : 0,
    exp.triggerDebugging ? 1 : 0,
  ]
  if (a.holdout) array.push(a.holdout.name, a.holdout.revision, a.holdout.bucket)
  return array
}

/**
 * The guild experiment array Discord sends (WIRE.md §4): [hash, hash_key, revision, populations, overrides,
 * overrides_formatted, holdout_name, holdout_bucket, aa_mode, trigger_debugging]. Rollout ends go out exclusive
 * (`e` + 1), as Discord's client reads them (`s <= position < e`); the file's ends are inclusive.
 */
export function guildArray(exp: Compiled): GuildExperimentArray {
  const d = exp.definition
  return [
    exp.hash,
    exp.hashKey,
    exp.revision,
    d.populations.map((p, i) => [
      p.ranges.map((r) => [r.bucket, r.rollout.map(({ s, e }) => ({ s, e: e + 1 }))]),
      exp.populations[i].wire,
    ]),
    (d.overrides ?? []).map((o) => ({ b: o.b, k: [...o.k] })),
    [],
    exp.holdout?.name ?? null,
    exp.holdout?.bucket ?? null,
    exp.aaMode ? 1 : 0,
    exp.triggerDebugging ? 1 : 0,
  ]
}

/** Compile a validated list (holdouts resolved to the compiled experiment they name). */
export function compileAll(definitions: Definition[]): Compiled[] {
  const compiled = definitions.map((d): Compiled => {
    const overrides = new Map<string, number>()
    for (const o of d.overrides ?? []) for (const id of o.k) if (!overrides.has(id)) overrides.set(id, o.b)
    return {
      definition: d,
      name: d.name,
      kind: d.kind,
      hash: murmur3(d.name),
      revision: d.revision,
      hashKey: d.hash_key ?? d.name,
      aaMode: d.aa_mode ?? false,
      triggerDebugging: d.trigger_debugging ?? false,
      ...(d.platform ? { platform: d.platform } : {}),
      overrides,
      populations: d.populations.map((p) => {
        const { wire, predicates } = compileFilters(p.filters)
        return {
          ranges: p.ranges.map((r) => ({
            bucket: r.bucket,
            spans: r.rollout.map((o) => [o.s, o.e] as [number, number]),
          })),
          predicates,
          wire,
        }
      }),
    }
  })
  const byName = new Map(compiled.map((c) => [c.name, c]))
  for (const c of compiled) {
    const h = c.definition.holdout
    const target = h && byName.get(h.name)
    if (h && target && target !== c) c.holdout = { name: h.name, bucket: h.bucket, experiment: target }
  }
  return compiled
}
