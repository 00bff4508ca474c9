// The compiled definitions, cached in memory: assignments never touch the database per experiment. A load in this
// process replaces the cache at once; a load by another process (the CLI against a running server's database) is
// noticed by reading the version row at most once a second.
import { appState } from '../core/app'
import { databaseEpoch } from '../db/client'
import { compileAll, guildArray, type Compiled, type GuildExperimentArray } from './bucketing'
import type { Platform } from './definitions'
import { readDefinitions, readVersion } from './store'

const VERSION_CHECK_MS = 1000

export type ExperimentSet = {
  version: number
  all: Compiled[]
  byName: Map<string, Compiled>
  user: Compiled[]
  guild: { experiment: Compiled; array: GuildExperimentArray }[]
}

/** This service's set, read from the database opening `epoch` (another one opened: read again). */
const newExperimentRegistry = () => ({ set: undefined as ExperimentSet | undefined, checkedAt: 0, epoch: -1 })
declare module '../core/app' {
  interface AppState {
    experimentRegistry: ReturnType<typeof newExperimentRegistry>
  }
}
const held = appState('experimentRegistry', newExperimentRegistry)

export function buildSet(version: number, all: Compiled[]): ExperimentSet {
  return {
    version,
    all,
    byName: new Map(all.map((c) => [c.name, c])),
    user: all.filter((c) => c.kind === 'user'),
    guild: all.filter((c) => c.kind === 'guild').map((experiment) => ({ experiment, array: guildArray(experiment) })),
  }
}

/** The current definitions (rebuilt when the version row moved). */
export async function experimentSet(): Promise<ExperimentSet> {
  const h = held()
  if (h.epoch !== databaseEpoch()) {
    h.set = undefined
    h.epoch = databaseEpoch()
  }
  const now = performance.now()
  if (h.set && now - h.checkedAt < VERSION_CHECK_MS) return h.set
  h.checkedAt = now
  if (h.set && (await readVersion()) === h.set.version) return h.set
  const { version, definitions } = await readDefinitions()
  // A load in this process may have put a newer set meanwhile (useSet): an older one never replaces it.
  if (!h.set || version > h.set.version) h.set = buildSet(version, compileAll(definitions))
  return h.set
}

/** After a load in this process: use the new set at once. */
export function useSet(set: ExperimentSet): void {
  const h = held()
  h.set = set
  h.checkedAt = performance.now()
  h.epoch = databaseEpoch()
}

/** An experiment tagged for a platform is only for requests that ask for that platform. */
export function visible(experiment: Compiled, platform: Platform | undefined): boolean {
  return !experiment.platform || experiment.platform === platform
}
