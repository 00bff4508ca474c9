// The console's experiments (#/experiments): the definitions file shown and edited in the page, saved whole with the
// CLI's validation (each problem listed with the line it concerns, a button that puts the cursor there), a preview of
// one id's bucket and why, and the rollout over a sample of ids.
import type { RouteResponse } from '../../../../client/src/index'
import { ApiError } from '../lib/client'
import { $, el, fieldMessages, submitting, value } from '../lib/ui'
import { admin, only, stat } from './common'
import { jsonLines, problemLine } from './json-lines'

type File = RouteResponse<'get', '/admin/experiments'>
type Saved = RouteResponse<'put', '/admin/experiments'>
type Preview = RouteResponse<'get', '/admin/experiments/{name}/preview'>
type Histogram = RouteResponse<'get', '/admin/experiments/{name}/histogram'>

const form = $<HTMLFormElement>('#experiments-form')
const previewForm = $<HTMLFormElement>('#preview-form')
const area = $<HTMLTextAreaElement>('#experiments-file')
let version: number | undefined
let kinds = new Map<string, string>()

function names(definitions: unknown[]) {
  kinds = new Map()
  for (const d of definitions as { name?: unknown; kind?: unknown }[])
    if (typeof d?.name === 'string') kinds.set(d.name, String(d.kind))
  $('#preview-name').replaceChildren(
    ...[...kinds].map(([name, kind]) => el('option', { value: name }, `${name} (${kind})`)),
  )
}

export async function openExperiments() {
  only('experiments')
  await submitting(form, async () => {
    const file = await admin<File>('GET', '/experiments')
    version = file.version
    area.value = JSON.stringify(file.definitions, null, 2)
    names(file.definitions)
    $('#experiments-problems').replaceChildren()
    $('#experiments-saved').textContent = `Version ${file.version}.`
  })
}

/** Select line `line` of the text area (and scroll it into view). */
function goToLine(line: number) {
  const lines = area.value.split('\n')
  const start = lines.slice(0, line - 1).reduce((n, l) => n + l.length + 1, 0)
  area.focus()
  area.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0))
  const height = area.scrollHeight / Math.max(1, lines.length)
  area.scrollTop = Math.max(0, (line - 3) * height)
}

function listProblems(problems: { line?: number; message: string }[]) {
  $('#experiments-problems').replaceChildren(
    ...problems.map((p) =>
      el(
        'li',
        {},
        p.line
          ? el('button', { type: 'button', class: 'secondary', onclick: () => goToLine(p.line!) }, `Line ${p.line}`)
          : '',
        p.line ? ' ' : '',
        p.message,
      ),
    ),
  )
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  $('#experiments-saved').textContent = ''
  listProblems([])
  let definitions: unknown
  try {
    definitions = JSON.parse(area.value)
  } catch (error) {
    // The parser names a position: its line.
    const at = /position (\d+)/.exec(String(error))
    const line = at ? area.value.slice(0, Number(at[1])).split('\n').length : undefined
    return listProblems([{ line, message: `Not valid JSON: ${(error as Error).message}` }])
  }
  void submitting(form, async () => {
    try {
      const saved = await admin<Saved>('PUT', '/experiments', {
        body: { definitions, version, reason: value(form, 'reason') || undefined },
      })
      version = saved.version
      names(definitions as unknown[])
      $('#experiments-saved').textContent = `Loaded ${saved.loaded} experiments: version ${saved.version}.${
        saved.warnings.length ? ` Warnings: ${saved.warnings.join(' ')}` : ''
      }`
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 50035) throw error
      const lines = jsonLines(area.value)
      listProblems(fieldMessages(error).map((message) => ({ message, line: problemLine(lines, message) })))
    }
  })
})

previewForm.addEventListener('submit', (event) => {
  event.preventDefault()
  void submitting(previewForm, async () => {
    const name = value(previewForm, 'name')
    const id = value(previewForm, 'target')
    const query = kinds.get(name) === 'guild' ? { guild: id } : { user: id }
    const p = await admin<Preview>('GET', `/experiments/${encodeURIComponent(name)}/preview`, { query })
    const why = p.override
      ? 'an override names it'
      : p.holdout
        ? `held out by ${p.holdout.name} (bucket ${p.holdout.bucket})`
        : p.population === -1
          ? 'no population placed it'
          : `population ${p.population}, rollout position ${p.position}`
    $('#preview-result').textContent = `Bucket ${p.bucket}: ${why}.`
  })
})

$('#histogram').addEventListener('click', () => {
  void submitting(previewForm, async () => {
    const name = value(previewForm, 'name')
    const h = await admin<Histogram>('GET', `/experiments/${encodeURIComponent(name)}/histogram`, {
      query: { sample: '2000' },
    })
    $('#histogram-result').replaceChildren(
      ...h.buckets.map((b) => stat(`Bucket ${b.bucket}`, `${((100 * b.count) / h.sample).toFixed(1)} %`)),
    )
  })
})
