// CPU profile of a hot path: our server under `bun --cpu-prof`, loaded by wrk for the scenario's duration, then
// stopped (SIGTERM, so the profile is written). Prints self time grouped by layer and the top frames by self time.
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { httpScenarios } from './http'
import { loginRequest } from './login'
import type { RunContext } from './lib/report'
import { startOurs } from './lib/servers'
import { wrk } from './lib/wrk'

type Frame = { functionName: string; url: string; lineNumber: number }
type Node = { id: number; callFrame: Frame; children?: number[] }
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] }

const GROUPS: [string, (url: string) => boolean][] = [
  ['Drizzle (query building, mapping rows)', (u) => u.includes('/node_modules/drizzle-orm/')],
  ['bun:sqlite (prepare, step)', (u) => u.startsWith('bun:sqlite')],
  [
    'Elysia (+ TypeBox, router)',
    (u) => /\/node_modules\/(elysia|memoirist|exact-mirror|@sinclair\/typebox|fast-decode-uri-component)\//.test(u),
  ],
  ['logging (src/core/log.ts)', (u) => u.endsWith('/src/core/log.ts')],
  ['our code (src/)', (u) => u.includes('/src/')],
  ['other packages', (u) => u.includes('/node_modules/')],
  ['Bun runtime (node:*, internal)', (u) => u.startsWith('node:') || u.startsWith('internal:') || u.startsWith('bun:')],
]

const ELYSIA_GENERATED = 'Elysia (+ TypeBox, router)'
const SQLITE = 'bun:sqlite (prepare, step)'
/** Statement methods of bun:sqlite, native: where the database work (compile, step, row to JS) happens. */
const SQLITE_NATIVE = new Set(['prepare', 'values', 'all', 'get', 'run', 'iterate', 'finalize'])

function groupOf(frame: Frame | undefined): string {
  if (!frame) return 'native, no JS caller (HTTP server, GC)'
  // Code made with new Function (Elysia's compiled handlers, TypeBox and exact-mirror checkers) has no URL.
  if (isGenerated(frame)) return ELYSIA_GENERATED
  for (const [name, test] of GROUPS) if (test(frame.url)) return name
  return 'native, no JS caller (HTTP server, GC)'
}

const hasUrl = (f: Frame) => f.url !== '' && f.url !== '[native code]'
const isGenerated = (f: Frame) => f.url === '' && f.lineNumber >= 0 && !f.functionName.startsWith('(')

/** `windowMs`: only samples taken this long after the process started (the load, not the start-up). */
export function summarize(profile: Profile, root: string, windowMs: [number, number] = [0, Infinity]): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map<number, number>()
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const groups = new Map<string, number>()
  const frames = new Map<string, { us: number; group: string }>()
  // Which of our functions the time is spent under: the innermost src/ frame of each sample (a store function
  // that builds and runs a query gets the Drizzle and SQLite time beneath it).
  const ours = new Map<string, number>()
  const short = (u: string) => u.replace(/^file:\/\//, '').replace(root + '/', '')
  let total = 0
  let at = 0
  for (let i = 0; i < profile.samples.length; i++) {
    at += profile.timeDeltas[i]
    if (at < windowMs[0] * 1000 || at > windowMs[1] * 1000) continue
    const us = profile.timeDeltas[i + 1] ?? 0
    const leaf = byId.get(profile.samples[i])!
    if (['(idle)', '(program)'].includes(leaf.callFrame.functionName)) continue
    // Native frames (JSON.stringify, console.log) count for the nearest JavaScript caller's layer, except a
    // statement's own work (prepare, values/all/get/run), which is SQLite's whoever calls it.
    let node: Node | undefined = leaf
    while (node && !hasUrl(node.callFrame) && !isGenerated(node.callFrame))
      node = parent.has(node.id) ? byId.get(parent.get(node.id)!) : undefined
    const native = node !== leaf
    // (src/db/client.ts calls prepared statements directly: its calls are SQLite's too.)
    const sqliteCall =
      native &&
      SQLITE_NATIVE.has(leaf.callFrame.functionName) &&
      /^bun:sqlite|drizzle-orm\/bun-sqlite\/|\/src\/db\/client\.ts$/.test(
        node?.callFrame.url.replace(/^.*node_modules\//, '') ?? '',
      )
    const group = sqliteCall ? SQLITE : groupOf(node?.callFrame)
    total += us
    groups.set(group, (groups.get(group) ?? 0) + us)
    const f = leaf.callFrame
    const where = hasUrl(f)
      ? `${short(f.url)}:${f.lineNumber + 1}`
      : isGenerated(f)
        ? 'generated code'
        : `native, called from ${node ? (isGenerated(node.callFrame) ? `generated \`${node.callFrame.functionName || '(anonymous)'}\`` : short(node.callFrame.url)) : '—'}`
    const key = `\`${f.functionName || '(anonymous)'}\` ${where}`
    const entry = frames.get(key) ?? { us: 0, group }
    entry.us += us
    frames.set(key, entry)
    let up: Node | undefined = leaf
    // The store function, not db/client.ts's statement runner under it.
    while (up && (!up.callFrame.url.includes('/src/') || up.callFrame.url.endsWith('/src/db/client.ts')))
      up = parent.has(up.id) ? byId.get(parent.get(up.id)!) : undefined
    const owner = up
      ? `\`${up.callFrame.functionName || '(anonymous)'}\` ${short(up.callFrame.url)}:${up.callFrame.lineNumber + 1}`
      : 'no src/ frame on the stack (Elysia, Bun)'
    ours.set(owner, (ours.get(owner) ?? 0) + us)
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1)} %`
  const lines = ['| layer (self time) | share |', '|---|---:|']
  for (const [name, us] of [...groups].sort((a, b) => b[1] - a[1])) lines.push(`| ${name} | ${pct(us)} |`)
  lines.push('', '| top frames by self time | layer | share |', '|---|---|---:|')
  for (const [key, { us, group }] of [...frames]
    .sort((a, b) => b[1].us - a[1].us)
    .slice(0, Number(process.env.PROFILE_TOP ?? 15)))
    lines.push(`| ${key} | ${group} | ${pct(us)} |`)
  lines.push('', '| innermost function of ours on the stack (time under it) | share |', '|---|---:|')
  for (const [key, us] of [...ours].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.PROFILE_TOP ?? 12)))
    lines.push(`| ${key} | ${pct(us)} |`)
  lines.push(
    '',
    `${(total / 1e6).toFixed(1)} s of load profiled (samples before and after the wrk run excluded). The sampler records JavaScript stacks only: time in Bun's native HTTP server outside any JS call is not in these shares.`,
  )
  return lines.join('\n')
}

export async function runProfile(ctx: RunContext, name: string): Promise<string> {
  const scenario =
    name === 'login'
      ? { title: 'POST /auth/login (c8)', request: loginRequest, connections: 8 }
      : httpScenarios.find((s) => s.name === name)
  if (!scenario) throw new Error(`no HTTP scenario "${name}"`)
  const dir = join(ctx.dir, `prof-${name}`)
  const spawned = performance.now()
  const server = await startOurs(ctx.dir, {
    bunFlags: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=250'],
    tag: `prof-${name}`,
  })
  let window: [number, number]
  try {
    const loadStart = performance.now() - spawned
    await wrk(
      server.url,
      scenario.request(ctx.world),
      {
        seconds: ctx.seconds,
        connections: 'connections' in scenario ? scenario.connections : ctx.connections,
        threads: 1,
      },
      ctx.dir,
    )
    window = [loadStart, performance.now() - spawned]
  } finally {
    await server.stop()
  }
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'))
  if (!file) throw new Error(`no .cpuprofile in ${dir}`)
  const profile = (await Bun.file(join(dir, file)).json()) as Profile
  const root = new URL('..', import.meta.url).pathname.replace(/\/$/, '')
  return `### CPU profile: ${scenario.title}\n\n${summarize(profile, root, window)}\n\n(profile: ${join(dir, file)})`
}
