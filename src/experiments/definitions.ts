// The definitions file (`server experiments load FILE.json`): its types and its validation. A bad file is refused
// whole; each problem names the element and the field, e.g. `[3].populations[0].ranges[1].rollout[0].e: must be ≤ 9999`.
import { at, Checker, isObject } from './check'
import { checkFilters, type Filters } from './filters'
import { murmur3, POSITIONS } from './murmur'

export type Rollout = { s: number; e: number }
export type PopulationRange = { bucket: number; rollout: Rollout[] }
export type Population = { ranges: PopulationRange[]; filters?: Filters }
export type Override = { b: number; k: string[] }
export const PLATFORMS = ['DEVELOPER_PORTAL'] as const
export type Platform = (typeof PLATFORMS)[number]

/** One element of the file, as loaded (optional fields stay absent; defaults apply when compiled). */
export type Definition = {
  name: string
  kind: 'user' | 'guild'
  revision: number
  hash_key?: string
  aa_mode?: boolean
  trigger_debugging?: boolean
  platform?: Platform
  holdout?: { name: string; bucket: number }
  populations: Population[]
  overrides?: Override[]
}

const POSITION_MAX = POSITIONS - 1
const REVISION_MAX = 2 ** 31 - 1
const BUCKET_MAX = 2 ** 31 - 1

export class DefinitionError extends Error {
  constructor(readonly problems: string[]) {
    const shown = problems.slice(0, 20)
    super(shown.join('\n') + (problems.length > shown.length ? `\n(and ${problems.length - shown.length} more)` : ''))
  }
}

const DEFINITION_FIELDS = [
  'name',
  'kind',
  'revision',
  'hash_key',
  'aa_mode',
  'trigger_debugging',
  'platform',
  'holdout',
  'populations',
  'overrides',
] as const

function checkRanges(check: Checker, path: string, value: unknown): void {
  check.array(path, value)?.forEach((range, i) => {
    const p = at(path, i)
    const r = check.object(p, range, ['bucket', 'rollout'])
    if (!r) return
    check.int(at(p, 'bucket'), r.bucket, -1, BUCKET_MAX)
    check.array(at(p, 'rollout'), r.rollout)?.forEach((rollout, j) => {
      const q = at(at(p, 'rollout'), j)
      const o = check.object(q, rollout, ['s', 'e'])
      if (!o) return
      const s = check.int(at(q, 's'), o.s, 0, POSITION_MAX)
      const e = check.int(at(q, 'e'), o.e, 0, POSITION_MAX)
      if (s !== undefined && e !== undefined && s > e) check.fail(at(q, 's'), `must be ≤ e (${e})`)
    })
  })
}

function checkOverrides(check: Checker, path: string, value: unknown): void {
  const seen = new Map<string, number>()
  check.array(path, value)?.forEach((override, i) => {
    const p = at(path, i)
    const o = check.object(p, override, ['b', 'k'])
    if (!o) return
    check.int(at(p, 'b'), o.b, -1, BUCKET_MAX)
    check.array(at(p, 'k'), o.k)?.forEach((id, j) => {
      const q = at(at(p, 'k'), j)
      if (!check.snowflake(q, id)) return
      const earlier = seen.get(id as string)
      if (earlier !== undefined) check.fail(q, `already in overrides[${earlier}]`)
      else seen.set(id as string, i)
    })
  })
}

function checkDefinition(check: Checker, path: string, value: unknown): void {
  const d = check.object(path, value, DEFINITION_FIELDS)
  if (!d) return
  check.key(at(path, 'name'), d.name)
  if (d.kind !== 'user' && d.kind !== 'guild') check.fail(at(path, 'kind'), 'must be "user" or "guild"')
  check.int(at(path, 'revision'), d.revision, 0, REVISION_MAX)
  if (d.hash_key !== undefined) check.key(at(path, 'hash_key'), d.hash_key)
  if (d.aa_mode !== undefined) check.bool(at(path, 'aa_mode'), d.aa_mode)
  if (d.trigger_debugging !== undefined) check.bool(at(path, 'trigger_debugging'), d.trigger_debugging)
  if (d.platform !== undefined && !PLATFORMS.includes(d.platform as Platform))
    check.fail(at(path, 'platform'), `must be one of ${PLATFORMS.join(', ')}`)
  if (d.holdout !== undefined) {
    const h = check.object(at(path, 'holdout'), d.holdout, ['name', 'bucket'])
    if (h) {
      check.key(at(at(path, 'holdout'), 'name'), h.name)
      // Discord's client never matches a holdout on None (-1): a held-out bucket is a real one.
      check.int(at(at(path, 'holdout'), 'bucket'), h.bucket, 0, BUCKET_MAX)
    }
  }
  check.array(at(path, 'populations'), d.populations)?.forEach((population, i) => {
    const p = at(at(path, 'populations'), i)
    const o = check.object(p, population, ['ranges', 'filters'])
    if (!o) return
    checkRanges(check, at(p, 'ranges'), o.ranges)
    if (o.filters === undefined) return
    if (d.kind === 'user') {
      if (!isObject(o.filters) || Object.keys(o.filters).length > 0)
        check.fail(at(p, 'filters'), 'user experiments take no filters (the filters are about servers)')
      return
    }
    checkFilters(check, at(p, 'filters'), o.filters)
  })
  if (d.overrides !== undefined) checkOverrides(check, at(path, 'overrides'), d.overrides)
}

/** Holdouts name another experiment of the same kind in the file, and never lead back to where they started. */
function checkHoldouts(check: Checker, list: Definition[]): void {
  const index = new Map(list.map((d, i) => [d.name, i]))
  list.forEach((d, i) => {
    if (!d.holdout) return
    const path = `[${i}].holdout.name`
    const target = index.get(d.holdout.name)
    if (target === undefined) return void check.fail(path, `no experiment named "${d.holdout.name}" in the file`)
    if (target === i) return void check.fail(path, 'must name another experiment')
    if (list[target].kind !== d.kind)
      return void check.fail(
        path,
        `"${d.holdout.name}" is a ${list[target].kind} experiment; the holdout of a ${d.kind} experiment must be a ${d.kind} experiment`,
      )
    const chain = [d.name]
    let next: Definition | undefined = list[target]
    while (next) {
      chain.push(next.name)
      if (next.name === d.name) return void check.fail(path, `holdouts form a cycle: ${chain.join(' → ')}`)
      next = next.holdout ? list[index.get(next.holdout.name) ?? -1] : undefined
      if (chain.length > list.length + 1) break
    }
  })
}

/** Positions 0-9999 that no range of a population covers (for a warning about guild experiments). */
function uncovered(population: Population): [number, number][] {
  const spans = population.ranges
    .flatMap((r) => r.rollout.map((o) => [o.s, o.e] as [number, number]))
    .sort((a, b) => a[0] - b[0])
  const gaps: [number, number][] = []
  let next = 0
  for (const [s, e] of spans) {
    if (s > next) gaps.push([next, s - 1])
    next = Math.max(next, e + 1)
  }
  if (next <= POSITION_MAX) gaps.push([next, POSITION_MAX])
  return gaps
}

/**
 * Validate a parsed definitions file. Returns the definitions (as given) and warnings; throws DefinitionError
 * naming every problem when the file is not acceptable.
 */
export function validateDefinitions(input: unknown): { definitions: Definition[]; warnings: string[] } {
  const check = new Checker()
  if (!Array.isArray(input)) throw new DefinitionError(['file: must be an array of experiments'])
  input.forEach((element, i) => checkDefinition(check, `[${i}]`, element))
  if (check.problems.length) throw new DefinitionError(check.problems)
  const list = input as Definition[]
  const names = new Map<string, number>()
  const hashes = new Map<number, number>()
  list.forEach((d, i) => {
    const sameName = names.get(d.name)
    if (sameName !== undefined) return void check.fail(`[${i}].name`, `"${d.name}" is already [${sameName}]`)
    names.set(d.name, i)
    const hash = murmur3(d.name)
    const sameHash = hashes.get(hash)
    // Clients key experiments by this hash: two names with one hash would be one experiment to them.
    if (sameHash !== undefined)
      check.fail(`[${i}].name`, `its hash ${hash} is also the hash of [${sameHash}] "${list[sameHash].name}"`)
    hashes.set(hash, i)
  })
  checkHoldouts(check, list)
  if (check.problems.length) throw new DefinitionError(check.problems)
  const warnings: string[] = []
  list.forEach((d, i) => {
    if (d.kind !== 'guild') return
    d.populations.forEach((p, j) => {
      const gaps = uncovered(p)
      if (!gaps.length) return
      const text = gaps.map(([s, e]) => (s === e ? `${s}` : `${s}-${e}`)).join(', ')
      warnings.push(
        `[${i}].populations[${j}]: positions ${text} are in no range; Discord's client gives a server there Control (0) when the filters hold, this server tries the next population`,
      )
    })
  })
  return { definitions: list, warnings }
}
