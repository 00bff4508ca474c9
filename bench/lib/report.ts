// Result rows and the table printed at the end (Markdown, ready for bench/RESULTS.md).
import type { World } from './world'

export type RunContext = {
  dir: string
  world: World
  /** seconds per measured wrk run, and before it a warm-up run */
  seconds: number
  warmSeconds: number
  /** HTTP rows: ours and bare measured in this many alternating rounds of seconds / rounds (median round shown) */
  rounds: number
  connections: number
}

export type Row = {
  scenario: string
  name: string
  ours?: string
  bare?: string
  /** throughput rows: ours/bare (1.00 = as fast as bare); cost rows (time, memory): "N× bare" */
  ratio?: string
  p99?: string
  target?: string
  met?: boolean
  note?: string
  skipped?: string
}

export const fmtRate = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2))
export const fmtMs = (ms: number) =>
  ms >= 100 ? `${ms.toFixed(0)} ms` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`
const times = (x: number) => `${x >= 10 ? x.toFixed(0) : x.toFixed(1)}×`

/** A higher-is-better row (req/s, logins/s): ratio = ours/bare, target a minimum ratio. */
export function ratioRow(r: {
  scenario: string
  name: string
  ours: number
  bare: number
  unit: string
  oursP99?: number
  bareP99?: number
  target?: number
  note?: string
}): Row {
  const ratio = r.ours / r.bare
  return {
    scenario: r.scenario,
    name: r.name,
    ours: `${fmtRate(r.ours)} ${r.unit}`,
    bare: `${fmtRate(r.bare)} ${r.unit}`,
    ratio: ratio.toFixed(2),
    p99:
      r.oursP99 !== undefined && r.bareP99 !== undefined
        ? `${times(r.oursP99 / r.bareP99)} (${fmtMs(r.oursP99)} / ${fmtMs(r.bareP99)})`
        : undefined,
    target: r.target !== undefined ? `≥ ${r.target.toFixed(2)}` : undefined,
    met: r.target !== undefined ? ratio >= r.target : undefined,
    note: r.note,
  }
}

/** A lower-is-better row (ms, KB): ratio = ours/bare as "N× bare", target an absolute maximum for ours. */
export function costRow(r: {
  scenario: string
  name: string
  ours: number
  bare: number
  format: (n: number) => string
  oursP99?: number
  bareP99?: number
  target?: { max: number; label: string }
  note?: string
}): Row {
  return {
    scenario: r.scenario,
    name: r.name,
    ours: r.format(r.ours),
    bare: r.format(r.bare),
    ratio: `${times(r.ours / r.bare)} bare`,
    p99:
      r.oursP99 !== undefined && r.bareP99 !== undefined
        ? `${times(r.oursP99 / r.bareP99)} (${fmtMs(r.oursP99)} / ${fmtMs(r.bareP99)})`
        : undefined,
    target: r.target?.label,
    met: r.target ? r.ours <= r.target.max : undefined,
    note: r.note,
  }
}

export function render(rows: Row[]): string {
  const head =
    '| scenario | ours | bare | ratio | p99 ours/bare | target | met | notes |\n|---|---:|---:|---:|---:|---|:-:|---|'
  const lines = rows.map((r) =>
    r.skipped
      ? `| ${r.scenario} | — | — | — | — | ${r.target ?? ''} | | skipped: ${r.skipped.replace(/\|/g, '\\|')} |`
      : `| ${r.scenario} | ${r.ours ?? ''} | ${r.bare ?? ''} | ${r.ratio ?? ''} | ${r.p99 ?? ''} | ${r.target ?? ''} | ${r.met === undefined ? '' : r.met ? 'yes' : 'no'} | ${(r.note ?? '').replace(/\|/g, '\\|')} |`,
  )
  return [head, ...lines].join('\n')
}

/** The issue's one-line-per-scenario form: scenario, ours, bare, ratio, p99 ours/bare. */
export function renderLine(r: Row): string {
  if (r.skipped) return `${r.name}: skipped (${r.skipped})`
  return `${r.name}: ours ${r.ours}, bare ${r.bare}, ratio ${r.ratio}${r.p99 ? `, p99 ours/bare ${r.p99}` : ''}${r.target ? `, target ${r.target} ${r.met ? 'met' : 'NOT met'}` : ''}`
}
