// What GET /experiments, READY and the CLI ask of experiments: assignments for a user or fingerprint, the guild
// experiment arrays, loading and showing definitions, and evaluating one experiment for one server or user.
import { createFingerprint, honouredFingerprint } from '../accounts/fingerprints'
import type { Caller } from '../core/caller'
import { clock } from '../core/clock'
import { Lru } from '../core/lru'
import type { IdentifyContribution } from '../gateway/bus'
import { guildForExperiments } from '../guilds/public'
import {
  compileAll,
  evaluate,
  userArray,
  type Assignment,
  type GuildExperimentArray,
  type UserExperimentArray,
} from './bucketing'
import { validateDefinitions, type Definition, type Platform } from './definitions'
import type { GuildFacts } from './filters'
import { buildSet, experimentSet, useSet, visible, type ExperimentSet } from './registry'
import { replaceDefinitions } from './store'

// A resource's arrays for the current definitions set: evaluating 50 experiments (a murmur3 hash each) cost more
// than the rest of the request. User experiments have no filters, so the answer depends only on the set, the
// resource and the platform; a new set (a load, here or by the CLI) starts an empty cache.
const assigned = new Lru<string, UserExperimentArray[]>(8192)
let assignedFrom: ExperimentSet | undefined

/** The user experiment arrays for a user ID or a fingerprint's snowflake, in file order (shared: read-only). */
export function userAssignments(resourceId: string, platform?: Platform): UserExperimentArray[] {
  const set = experimentSet()
  if (set !== assignedFrom) {
    assigned.clear()
    assignedFrom = set
  }
  const key = platform ? `${resourceId} ${platform}` : resourceId
  let out = assigned.get(key)
  if (out) return out
  out = []
  const now = clock.now()
  for (const exp of set.user)
    if (visible(exp, platform)) out.push(userArray(exp, evaluate(exp, resourceId, undefined, now)))
  assigned.set(key, out)
  return out
}

/** Every server experiment as Discord encodes it, for the client to evaluate. */
export function guildExperimentArrays(platform?: Platform): GuildExperimentArray[] {
  const out: GuildExperimentArray[] = []
  for (const { experiment, array } of experimentSet().guild) if (visible(experiment, platform)) out.push(array)
  return out
}

export type ExperimentsRequest = {
  caller?: Caller
  /** X-Fingerprint as sent (absent or empty: none). */
  fingerprint?: string | null
  /** The client's address, asked only when a new fingerprint is made. */
  ip: () => string
  withGuildExperiments: boolean
  platform?: Platform
}

export type ExperimentsResponse = {
  fingerprint?: string
  assignments: UserExperimentArray[]
  guild_experiments?: GuildExperimentArray[]
}

/**
 * GET /experiments: the caller's assignments; without a token, those of the fingerprint sent, or of a new one
 * (a fingerprint past the per-IP allowance, or one already ended by a login, is not honoured: no assignments).
 */
export function experimentsFor(request: ExperimentsRequest): ExperimentsResponse {
  let generated: string | undefined
  let resource: string | undefined
  if (request.caller) resource = request.caller.userId
  else if (request.fingerprint) resource = honouredFingerprint(request.fingerprint)
  else {
    generated = createFingerprint(request.ip())
    resource = honouredFingerprint(generated)
  }
  return {
    ...(generated ? { fingerprint: generated } : {}),
    assignments: resource ? userAssignments(resource, request.platform) : [],
    ...(request.withGuildExperiments ? { guild_experiments: guildExperimentArrays(request.platform) } : {}),
  }
}

/** READY: the user's assignments and the server experiments, from the same cached definitions. */
export function experimentsIdentify(caller: Caller): IdentifyContribution {
  if (caller.kind !== 'user') return {}
  return { ready: { experiments: userAssignments(caller.userId), guild_experiments: guildExperimentArrays() } }
}

/** Validate and store a definitions file (replace-all); this process uses it at once, others within a second. */
export function loadDefinitions(input: unknown): { loaded: number; version: number; warnings: string[] } {
  const { definitions, warnings } = validateDefinitions(input)
  const compiled = compileAll(definitions)
  const version = replaceDefinitions(definitions, clock.now())
  useSet(buildSet(version, compiled))
  return { loaded: definitions.length, version, warnings }
}

export function listDefinitions() {
  return experimentSet().all.map((c) => ({
    name: c.name,
    kind: c.kind,
    revision: c.revision,
    hash: c.hash,
    ...(c.definition.hash_key ? { hash_key: c.definition.hash_key } : {}),
    ...(c.platform ? { platform: c.platform } : {}),
    ...(c.definition.holdout ? { holdout: c.definition.holdout } : {}),
    aa_mode: c.aaMode,
    trigger_debugging: c.triggerDebugging,
    populations: c.populations.length,
    overrides: c.overrides.size,
  }))
}

export function showDefinition(name: string): Definition | undefined {
  return experimentSet().byName.get(name)?.definition
}

export class UnknownResource extends Error {}

function guildFacts(guildId: string): GuildFacts | undefined {
  const g = guildForExperiments(guildId)
  if (!g) return undefined
  return {
    id: g.id,
    features: g.features,
    memberCount: g.member_count,
    vanityUrlCode: g.vanity_url_code ?? null,
    hubType: g.hub_type ?? null,
  }
}

/** One experiment for one server (guild experiments) or user/fingerprint ID (user experiments). */
export function evaluateOne(name: string, target: { guild?: string; user?: string }) {
  const exp = experimentSet().byName.get(name)
  if (!exp) throw new UnknownResource(`no experiment named "${name}"`)
  let facts: GuildFacts | undefined
  let resourceId: string
  if (exp.kind === 'guild') {
    if (!target.guild) throw new UnknownResource(`"${name}" is a guild experiment: give --guild ID`)
    facts = guildFacts(target.guild)
    if (!facts) throw new UnknownResource(`no server with ID ${target.guild}`)
    resourceId = target.guild
  } else {
    if (!target.user) throw new UnknownResource(`"${name}" is a user experiment: give --user ID`)
    resourceId = target.user
  }
  const a: Assignment = evaluate(exp, resourceId, facts, clock.now())
  return {
    experiment: name,
    kind: exp.kind,
    resource_id: resourceId,
    bucket: a.bucket,
    population: a.population,
    position: a.position,
    override: a.override,
    ...(a.holdout ? { holdout: a.holdout } : {}),
  }
}
