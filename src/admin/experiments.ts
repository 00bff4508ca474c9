// The console's experiments: what the CLI does (`experiments load|list|show|eval`) in the page. The definitions file
// shown whole and replaced whole with the CLI's validation (every problem with its path, e.g.
// `[3].populations[0].ranges[1].rollout[0].e: must be ≤ 9999`, which the page maps to its line); a preview of one
// experiment for a user id, a fingerprint or a guild; a rollout histogram over a sample of ids. A load takes effect
// at once here and within a second on every other node (experiments/registry.ts), and is audited.
import { randomInt } from 'node:crypto'
import { clock } from '../core/clock'
import { transaction } from '../db/client'
import { evaluate } from '../experiments/bucketing'
import { DefinitionError } from '../experiments/definitions'
import { experimentSet } from '../experiments/registry'
import { evaluateOne, loadDefinitions, UnknownResource } from '../experiments/service'
import { type Actor, audit } from './audit'
import { definitionsRefused, experimentTargetRefused, staleDefinitions } from './errors'

/** The loaded file, as the CLI's `experiments show` shows each element, with the version it is. */
export async function experimentsFile() {
  const set = await experimentSet()
  return { version: set.version, definitions: set.all.map((c) => c.definition) }
}

/**
 * Replace the definitions (a bad file changes nothing: every problem is answered). `expected`: the version the
 * operator edited; another load since then is refused, so one operator's edit never silently undoes another's.
 */
export async function saveExperiments(
  actor: Actor,
  definitions: unknown,
  expected: number | undefined,
  reason: string | undefined,
) {
  if (expected !== undefined && expected !== (await experimentSet()).version) throw staleDefinitions()
  try {
    return await transaction(async () => {
      const loaded = await loadDefinitions(definitions)
      await audit(actor, {
        action: 'experiments.load',
        targetType: 'experiments',
        reason,
        details: { version: loaded.version, loaded: loaded.loaded },
      })
      return loaded
    })
  } catch (error) {
    if (error instanceof DefinitionError) throw definitionsRefused(error.problems)
    throw error
  }
}

/** Which bucket one user id or fingerprint (user experiments) or guild (guild experiments) gets, and why. */
export async function previewExperiment(name: string, target: { user?: string; guild?: string }) {
  try {
    return await evaluateOne(name, target)
  } catch (error) {
    if (error instanceof UnknownResource) throw experimentTargetRefused(error.message)
    throw error
  }
}

export const MAX_SAMPLE = 20_000

/**
 * The buckets `sample` random ids fall in (as the clients see them: an A/A experiment gives -1). A guild
 * experiment's populations with filters count no id here: a random id has no server's facts.
 */
export async function rolloutHistogram(name: string, sample: number) {
  const exp = (await experimentSet()).byName.get(name)
  if (!exp) throw experimentTargetRefused(`no experiment named "${name}"`)
  const counts = new Map<number, number>()
  const now = clock.now()
  for (let i = 0; i < sample; i++) {
    // A snowflake-like id: a random time of the last few years, a random tail.
    const id = ((BigInt(now - randomInt(1, 2 ** 47)) - 1420070400000n) << 22n) | BigInt(randomInt(0, 2 ** 22))
    const { bucket } = evaluate(exp, id.toString(), undefined, now)
    counts.set(bucket, (counts.get(bucket) ?? 0) + 1)
  }
  return {
    experiment: name,
    kind: exp.kind,
    sample,
    buckets: [...counts].sort((a, b) => a[0] - b[0]).map(([bucket, count]) => ({ bucket, count })),
  }
}
