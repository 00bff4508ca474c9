// The shape of src/, checked in CI (.ci/run) and by `bun run check:structure`:
// - floors: a folder (or root file) imports only from lower floors, never from its own floor or above, so no import
//   circle can form between folders; an unknown folder fails until it is given a floor here and in docs/DESIGN.md;
// - errors: `new ApiError(` only in core/errors.ts and the domains' errors.ts;
// - queries: `db()` and query builders only in store.ts files (and db/ itself); another domain's tables only in
//   tables.ts (foreign keys), and in tables.pg.ts, their PostgreSQL mirror;
// - postgresql: the PostgreSQL side (tables.pg.ts files, db/pg/, the packages `postgres` and `drizzle-orm/pg-core`,
//   `drizzle-orm/postgres-js`) is imported statically only by the PostgreSQL side, so none of it is loaded by the
//   SQLite server or the binary (tests/db/pg-apart.test.ts checks the bundle too); an `import()` may reach it.
// Prints every finding and exits 1 when there is one.
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, normalize, relative } from 'node:path'

/** Bottom up. Keep in step with the drawing in docs/DESIGN.md. */
export const FLOORS: string[][] = [
  ['core', 'geo', 'types.d.ts', 'version.ts'],
  ['config.ts', 'db'],
  ['delivery', 'http'],
  ['gateway'],
  ['domain.ts'],
  ['accounts'],
  ['usernames', 'oauth2', 'guilds'],
  ['auth', 'mfa', 'lobbies', 'experiments'],
  ['voice', 'remote-auth', 'web'],
  ['modules.ts', 'cli.ts'],
  ['housekeeping.ts', 'metrics.ts', 'app.ts'],
  ['server.ts'],
  ['main.ts'],
]

const ROOT = normalize(join(import.meta.dir, '..'))
const SRC = join(ROOT, 'src')

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(entry.name) ? [path] : []
  })
}

/** The part of the house a file belongs to: its top folder under src/, or the root file itself. */
function unitOf(file: string): string {
  const [first] = relative(SRC, file).split('/')
  return first
}

const IMPORT =
  /^\s*(import|export)\b(\s+type\b)?[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm

type Import = { specifier: string; typeOnly: boolean; dynamic: boolean }

function importsOf(text: string): Import[] {
  const out: Import[] = []
  for (const m of text.matchAll(IMPORT))
    out.push({ specifier: m[3] ?? m[4] ?? m[5], typeOnly: m[2] !== undefined, dynamic: m[5] !== undefined })
  return out
}

const TABLES = /(^|\/)tables(\.pg)?(\.ts)?$/
const PG_PACKAGE = /^(postgres|drizzle-orm\/(pg-core|postgres-js))(\/|$)/

/** A file of the PostgreSQL side: a tables.pg.ts or anything under db/pg/ (paths relative to src/). */
export function isPgFile(rel: string): boolean {
  return /(^|\/)tables\.pg(\.ts)?$/.test(rel) || /^db\/pg(\/|$)/.test(rel)
}

/** The src/ file an import names, or undefined for packages, Bun built-ins and files outside src/. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined
  const path = normalize(join(dirname(from), specifier))
  if (!path.startsWith(SRC + '/')) return undefined
  return path
}

export type Finding = { rule: string; file: string; detail: string }

export function check(): { findings: Finding[]; edges: Map<string, Set<string>> } {
  const floorOf = new Map<string, number>()
  FLOORS.forEach((units, floor) => units.forEach((unit) => floorOf.set(unit, floor)))
  const findings: Finding[] = []
  const edges = new Map<string, Set<string>>()
  const files = sourceFiles(SRC)

  for (const file of files) {
    const rel = relative(SRC, file)
    const unit = unitOf(file)
    const text = readFileSync(file, 'utf8')
    const base = rel.split('/').pop()!
    if (!floorOf.has(unit))
      findings.push({
        rule: 'floors',
        file: rel,
        detail: `${unit} has no floor: add it to FLOORS in scripts/check-structure.ts and to docs/DESIGN.md`,
      })

    const tablesFile = base === 'tables.ts' || base === 'tables.pg.ts'
    for (const { specifier, typeOnly, dynamic } of importsOf(text)) {
      const to = target(file, specifier)
      if (!typeOnly && !dynamic && !isPgFile(rel)) {
        const pg = to ? isPgFile(relative(SRC, to)) : PG_PACKAGE.test(specifier)
        if (pg)
          findings.push({
            rule: 'postgresql',
            file: rel,
            detail: `imports ${to ? relative(SRC, to) : specifier}: the PostgreSQL side is loaded only by itself or through import()`,
          })
      }
      if (!to) continue
      const other = unitOf(to)
      const toRel = relative(SRC, to)
      if (other !== unit) {
        if (!edges.has(unit)) edges.set(unit, new Set())
        edges.get(unit)!.add(other)
        const mine = floorOf.get(unit)
        const theirs = floorOf.get(other)
        if (mine !== undefined && theirs !== undefined && theirs >= mine) {
          findings.push({
            rule: 'floors',
            file: rel,
            detail: `imports ${toRel}: ${other} is ${theirs === mine ? 'on the same floor' : 'a floor above'}`,
          })
        }
        if (TABLES.test(specifier) && !typeOnly && !tablesFile) {
          findings.push({
            rule: 'queries',
            file: rel,
            detail: `imports ${toRel}: another domain's tables are read through its store`,
          })
        }
      }
    }

    const isStore = base === 'store.ts' || unit === 'db'
    if (!isStore) {
      if (/\bdb\(\)/.test(text))
        findings.push({ rule: 'queries', file: rel, detail: 'calls db(): queries belong in the domain store.ts' })
      if (/\btx\s*\.\s*(select|insert|update|delete)\s*\(/.test(text))
        findings.push({ rule: 'queries', file: rel, detail: 'builds a query: queries belong in the domain store.ts' })
      if (!tablesFile && importsOf(text).some((i) => i.specifier === 'drizzle-orm')) {
        findings.push({
          rule: 'queries',
          file: rel,
          detail: 'imports drizzle-orm: queries belong in the domain store.ts',
        })
      }
    }
    const errorList = rel === 'core/errors.ts' || base === 'errors.ts'
    if (!errorList && /\bnew ApiError\(/.test(text)) {
      findings.push({
        rule: 'errors',
        file: rel,
        detail: 'new ApiError(...) outside an errors.ts: add it to the domain error list',
      })
    }
  }
  return { findings, edges }
}

/** Folders that import each other through a loop (strongly connected parts of more than one). */
export function circles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  let counter = 0
  const visit = (v: string) => {
    index.set(v, counter)
    low.set(v, counter)
    counter += 1
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!))
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = []
      let w: string
      do {
        w = stack.pop()!
        onStack.delete(w)
        part.push(w)
      } while (w !== v)
      if (part.length > 1) out.push(part.sort())
    }
  }
  for (const v of edges.keys()) if (!index.has(v)) visit(v)
  return out
}

if (import.meta.main) {
  const { findings, edges } = check()
  for (const part of circles(edges))
    findings.push({ rule: 'floors', file: part.join(', '), detail: 'import each other in a circle' })
  for (const f of findings) console.log(`${f.rule}: src/${f.file}: ${f.detail}`)
  if (findings.length) {
    console.log(`\n${findings.length} finding(s); the floors and rules are in docs/DESIGN.md`)
    process.exit(1)
  }
  console.log('structure: floors, errors and queries as docs/DESIGN.md draws them')
}
