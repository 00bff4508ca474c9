// Helpers for the experiments tests, including a reference evaluation written here from the spec (spec §2.5,
// the rules) with Bun's own Murmur3 (Bun.hash.murmur32v3), independent of src/experiments.
import { createSession } from '../../src/accounts/sessions'
import { loadDefinitions } from '../../src/experiments/service'
import { insertUser } from '../../src/accounts/store'
import { server } from '../helpers'

export type Def = {
  name: string
  kind: 'user' | 'guild'
  revision: number
  hash_key?: string
  aa_mode?: boolean
  trigger_debugging?: boolean
  platform?: string
  holdout?: { name: string; bucket: number }
  populations: { ranges: { bucket: number; rollout: { s: number; e: number }[] }[]; filters?: Record<string, any> }[]
  overrides?: { b: number; k: string[] }[]
}

export const mmh3 = (key: string) => Bun.hash.murmur32v3(key, 0)

export async function load(defs: unknown) {
  await server()
  return await loadDefinitions(defs)
}

/** A user whose ID the test chooses, with a session token. */
export async function userWithId(id: string) {
  await server()
  await insertUser({ id, username: `fixed${id.slice(-12)}`, createdAt: Date.now() })
  const { token } = await createSession(id, { platform: 'test' })
  return { id, token }
}

export type RefResult = {
  bucket: number
  raw: number
  override: boolean
  population: number
  position: number
  holdout?: [string, number, number]
}

/** The spec's evaluation of one user experiment (no filters) for one resource. */
export function refEvaluate(defs: Def[], name: string, id: string): RefResult {
  const d = defs.find((x) => x.name === name)!
  const position = mmh3(`${d.hash_key ?? d.name}:${id}`) % 10000
  for (const o of d.overrides ?? [])
    if (o.k.includes(id)) return { bucket: o.b, raw: o.b, override: true, population: -1, position }
  let population = -1
  let raw = -1
  for (const [i, p] of d.populations.entries()) {
    const hit = p.ranges.find((r) => r.rollout.some(({ s, e }) => position >= s && position <= e))
    if (hit) {
      population = i
      raw = hit.bucket
      break
    }
  }
  let holdout: RefResult['holdout']
  if (raw !== -1 && d.holdout) {
    const other = refEvaluate(defs, d.holdout.name, id)
    if (other.raw !== -1 && other.raw === d.holdout.bucket) {
      holdout = [d.holdout.name, defs.find((x) => x.name === d.holdout!.name)!.revision, other.raw]
      raw = -1
    }
  }
  return { bucket: d.aa_mode ? -1 : raw, raw, override: false, population, position, ...(holdout ? { holdout } : {}) }
}

/** The user experiment array the spec's table describes, built from the reference evaluation. */
export function refUserArray(defs: Def[], name: string, id: string): unknown[] {
  const d = defs.find((x) => x.name === name)!
  const r = refEvaluate(defs, name, id)
  return [
    mmh3(d.name),
    d.revision,
    r.bucket,
    r.override ? 0 : -1,
    r.population,
    r.position,
    d.aa_mode ? 1 : 0,
    d.trigger_debugging ? 1 : 0,
    ...(r.holdout ?? []),
  ]
}

/** A small deterministic PRNG so failures reproduce. */
export function prng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Cut 0-9999 into consecutive inclusive ranges with random buckets (-1..3). */
export function randomRanges(rand: () => number, pieces: number) {
  const cuts = [...new Set(Array.from({ length: pieces - 1 }, () => 1 + Math.floor(rand() * 9998)))].sort(
    (a, b) => a - b,
  )
  const bounds = [0, ...cuts, 10000]
  return bounds
    .slice(0, -1)
    .map((s, i) => ({ bucket: Math.floor(rand() * 5) - 1, rollout: [{ s, e: bounds[i + 1] - 1 }] }))
}
