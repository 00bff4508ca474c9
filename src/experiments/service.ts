// What GET /experiments, READY and the CLI ask of experiments: assignments for a user or fingerprint, the guild
// experiment arrays, loading and showing definitions, and evaluating one experiment for one server or user.
import { appState } from '../core/app'
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

// GET /experiments answers from JSON text kept per definitions set: a resource's assignments (evaluating 50
// experiments, a murmur3 hash each, and writing them out cost more than the rest of the request) and the guild
// arrays per platform. User experiments have no filters, so the text depends only on the set, the resource and the
// platform; a new set (a load, here or by the CLI) starts empty caches. Bounded small (an entry is ~2 KB with 40
// experiments); READY computes its arrays without keeping them (once per session).
const assignedText = new Lru<string, string>(1024)
/** What this module holds per App (core/app.ts). */
const newExperiments = () => ({
  guildText: new Map<string, string>(),
  textsFrom: undefined as ExperimentSet | undefined,
})
declare module '../core/app' {
  interface AppState {
    experiments: ReturnType<typeof newExperiments>
  }
}
const held = appState('experiments', newExperiments)

/** The current set, the text caches emptied when it is a new one. */
async function textsOfCurrentSet(): Promise<ExperimentSet> {
  const st = held()
  const set = await experimentSet()
  if (set === st.textsFrom) return set
  assignedText.clear()
  st.guildText.clear()
  st.textsFrom = set
  return set
}

function assignmentsOf(set: ExperimentSet, resourceId: string, platform: Platform | undefined): UserExperimentArray[] {
  const now = clock.now()
  const out: UserExperimentArray[] = []
  for (const exp of set.user)
    if (visible(exp, platform)) out.push(userArray(exp, evaluate(exp, resourceId, undefined, now)))
  return out
}

/** The user experiment arrays for a user ID or a fingerprint's snowflake, in file order. */
export async function userAssignments(resourceId: string, platform?: Platform): Promise<UserExperimentArray[]> {
  return assignmentsOf(await experimentSet(), resourceId, platform)
}

/**
 * userAssignments as JSON text, kept per resource and platform until the definitions change. Made from the set the
 * caches belong to, in one step: a text of an older set never lands among a newer set's.
 */
async function assignmentsText(resourceId: string, platform?: Platform): Promise<string> {
  const set = await textsOfCurrentSet()
  const key = platform ? `${resourceId} ${platform}` : resourceId
  let text = assignedText.get(key)
  if (text === undefined) {
    text = JSON.stringify(assignmentsOf(set, resourceId, platform))
    if (held().textsFrom === set) assignedText.set(key, text)
  }
  return text
}

function guildArraysOf(set: ExperimentSet, platform: Platform | undefined): GuildExperimentArray[] {
  const out: GuildExperimentArray[] = []
  for (const { experiment, array } of set.guild) if (visible(experiment, platform)) out.push(array)
  return out
}

/** guildExperimentArrays as JSON text, kept per platform until the definitions change. */
async function guildArraysText(platform?: Platform): Promise<string> {
  const st = held()
  const set = await textsOfCurrentSet()
  const key = platform ?? ''
  let text = st.guildText.get(key)
  if (text === undefined) {
    text = JSON.stringify(guildArraysOf(set, platform))
    if (st.textsFrom === set) st.guildText.set(key, text)
  }
  return text
}

/** Every server experiment as Discord encodes it, for the client to evaluate. */
export async function guildExperimentArrays(platform?: Platform): Promise<GuildExperimentArray[]> {
  return guildArraysOf(await experimentSet(), platform)
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

/**
 * GET /experiments as JSON text (`{fingerprint?, assignments, guild_experiments?}`): the caller's assignments;
 * without a token, those of the fingerprint sent, or of a new one (a fingerprint past the per-IP allowance, or one
 * already ended by a login, is not honoured: no assignments).
 */
export async function experimentsAnswer(request: ExperimentsRequest): Promise<string> {
  let generated: string | undefined
  let resource: string | undefined
  if (request.caller) resource = request.caller.userId
  else if (request.fingerprint) resource = await honouredFingerprint(request.fingerprint)
  else {
    generated = await createFingerprint(request.ip())
    resource = await honouredFingerprint(generated)
  }
  const fingerprint = generated ? `"fingerprint":${JSON.stringify(generated)},` : ''
  const assignments = resource ? await assignmentsText(resource, request.platform) : '[]'
  const guilds = request.withGuildExperiments ? `,"guild_experiments":${await guildArraysText(request.platform)}` : ''
  return `{${fingerprint}"assignments":${assignments}${guilds}}`
}

/** READY: the user's assignments and the server experiments, from the same cached definitions. */
export async function experimentsIdentify(caller: Caller): Promise<IdentifyContribution> {
  if (caller.kind !== 'user') return {}
  return {
    ready: { experiments: await userAssignments(caller.userId), guild_experiments: await guildExperimentArrays() },
  }
}

/** Validate and store a definitions file (replace-all); this process uses it at once, others within a second. */
export async function loadDefinitions(
  input: unknown,
): Promise<{ loaded: number; version: number; warnings: string[] }> {
  const { definitions, warnings } = validateDefinitions(input)
  const compiled = compileAll(definitions)
  const version = await replaceDefinitions(definitions, clock.now())
  useSet(buildSet(version, compiled))
  return { loaded: definitions.length, version, warnings }
}

export async function listDefinitions() {
  return (await experimentSet()).all.map((c) => ({
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

export async function showDefinition(name: string): Promise<Definition | undefined> {
  return (await experimentSet()).byName.get(name)?.definition
}

export class UnknownResource extends Error {}

async function guildFacts(guildId: string): Promise<GuildFacts | undefined> {
  const g = await guildForExperiments(guildId)
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
export async function evaluateOne(name: string, target: { guild?: string; user?: string }) {
  const exp = (await experimentSet()).byName.get(name)
  if (!exp) throw new UnknownResource(`no experiment named "${name}"`)
  let facts: GuildFacts | undefined
  let resourceId: string
  if (exp.kind === 'guild') {
    if (!target.guild) throw new UnknownResource(`"${name}" is a guild experiment: give --guild ID`)
    facts = await guildFacts(target.guild)
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
